"""yunjey/pytorch-tutorial, 02-intermediate/language_model: a word-level LSTM language model with
truncated backpropagation (detached states), gradient clipping and sampling by multinomial.

Sources, both at https://github.com/yunjey/pytorch-tutorial/tree/0500d3df5a2a8080ccfccbc00aca0eacc21818db
(MIT licence, Copyright (c) 2017): tutorials/02-intermediate/language_model/data_utils.py and
main.py, in that order in one file.

Changes in the port:
- imports: torch -> autogradcli; `from data_utils import Dictionary, Corpus` dropped (one file).
- data: Penn Treebank's data/train.txt -> two public-domain sonnets (tests/programs/_sonnets.py),
  written there by the port.
- sizes: embed 128 -> 16, hidden 1024 -> 32, batch 20 -> 4, seq_length 30 -> 8, 1000 sampled
  words -> 50, lr 0.002 -> 0.01; printing every 100 steps / words -> every 10.
- torch.manual_seed(0) added; outcome (added): each step's loss is kept in `losses`; the program
  asserts the mean loss of the last epoch is well below that of the first, and that sample.txt
  holds the 50 sampled words (each followed by a space, or a newline for <eos>).
"""
import os

from _sonnets import SONNETS  # the port: tests/programs/_sonnets.py

os.makedirs("data", exist_ok=True)
with open("data/train.txt", "w") as f:
    f.write(SONNETS)

# ---- data_utils.py ----
import autogradcli as torch

torch.manual_seed(0)  # added


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = {}
        self.idx = 0
    
    def add_word(self, word):
        if not word in self.word2idx:  # noqa: E713  (the source's spelling)
            self.word2idx[word] = self.idx
            self.idx2word[self.idx] = word
            self.idx += 1
    
    def __len__(self):
        return len(self.word2idx)


class Corpus(object):
    def __init__(self):
        self.dictionary = Dictionary()

    def get_data(self, path, batch_size=20):
        # Add words to the dictionary
        with open(path, 'r') as f:
            tokens = 0
            for line in f:
                words = line.split() + ['<eos>']
                tokens += len(words)
                for word in words: 
                    self.dictionary.add_word(word)  
        
        # Tokenize the file content
        ids = torch.LongTensor(tokens)
        token = 0
        with open(path, 'r') as f:
            for line in f:
                words = line.split() + ['<eos>']
                for word in words:
                    ids[token] = self.dictionary.word2idx[word]
                    token += 1
        num_batches = ids.size(0) // batch_size
        ids = ids[:num_batches*batch_size]
        return ids.view(batch_size, -1)


# ---- main.py ----
# Some part of the code was referenced from below.
# https://github.com/pytorch/examples/tree/master/word_language_model 
import autogradcli as torch
import autogradcli.nn as nn
import numpy as np
from autogradcli.nn.utils import clip_grad_norm_


# Device configuration
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

# Hyper-parameters
embed_size = 16
hidden_size = 32
num_layers = 1
num_epochs = 5
num_samples = 50     # number of words to be sampled
batch_size = 4
seq_length = 8
learning_rate = 0.01

# Load "Penn Treebank" dataset
corpus = Corpus()
ids = corpus.get_data('data/train.txt', batch_size)
vocab_size = len(corpus.dictionary)
num_batches = ids.size(1) // seq_length


# RNN based language model
class RNNLM(nn.Module):
    def __init__(self, vocab_size, embed_size, hidden_size, num_layers):
        super(RNNLM, self).__init__()
        self.embed = nn.Embedding(vocab_size, embed_size)
        self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, batch_first=True)
        self.linear = nn.Linear(hidden_size, vocab_size)
        
    def forward(self, x, h):
        # Embed word ids to vectors
        x = self.embed(x)
        
        # Forward propagate LSTM
        out, (h, c) = self.lstm(x, h)
        
        # Reshape output to (batch_size*sequence_length, hidden_size)
        out = out.reshape(out.size(0)*out.size(1), out.size(2))
        
        # Decode hidden states of all time steps
        out = self.linear(out)
        return out, (h, c)

model = RNNLM(vocab_size, embed_size, hidden_size, num_layers).to(device)

# Loss and optimizer
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

# Truncated backpropagation
def detach(states):
    return [state.detach() for state in states] 

# Train the model
losses = []  # added: every step's loss, for the outcome
for epoch in range(num_epochs):
    # Set initial hidden and cell states
    states = (torch.zeros(num_layers, batch_size, hidden_size).to(device),
              torch.zeros(num_layers, batch_size, hidden_size).to(device))
    
    for i in range(0, ids.size(1) - seq_length, seq_length):
        # Get mini-batch inputs and targets
        inputs = ids[:, i:i+seq_length].to(device)
        targets = ids[:, (i+1):(i+1)+seq_length].to(device)
        
        # Forward pass
        states = detach(states)
        outputs, states = model(inputs, states)
        loss = criterion(outputs, targets.reshape(-1))
        losses.append(loss.item())  # added
        
        # Backward and optimize
        optimizer.zero_grad()
        loss.backward()
        clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()

        step = (i+1) // seq_length
        if step % 10 == 0:
            print ('Epoch [{}/{}], Step[{}/{}], Loss: {:.4f}, Perplexity: {:5.2f}'
                   .format(epoch+1, num_epochs, step, num_batches, loss.item(), np.exp(loss.item())))

# Test the model
with torch.no_grad():
    with open('sample.txt', 'w') as f:
        # Set intial hidden ane cell states
        state = (torch.zeros(num_layers, 1, hidden_size).to(device),
                 torch.zeros(num_layers, 1, hidden_size).to(device))

        # Select one word id randomly
        prob = torch.ones(vocab_size)
        input = torch.multinomial(prob, num_samples=1).unsqueeze(1).to(device)

        for i in range(num_samples):
            # Forward propagate RNN 
            output, state = model(input, state)

            # Sample a word id
            prob = output.exp()
            word_id = torch.multinomial(prob, num_samples=1).item()

            # Fill input with sampled word id for the next time step
            input.fill_(word_id)

            # File write
            word = corpus.dictionary.idx2word[word_id]
            word = '\n' if word == '<eos>' else word + ' '
            f.write(word)

            if (i+1) % 10 == 0:
                print('Sampled [{}/{}] words and save to {}'.format(i+1, num_samples, 'sample.txt'))

# Save the model checkpoints
torch.save(model.state_dict(), 'model.ckpt')

# ---- outcome (added) ----
per_epoch = len(losses) // num_epochs
first, last = losses[:per_epoch], losses[-per_epoch:]
print("mean loss, first epoch %.3f, last epoch %.3f" % (np.mean(first), np.mean(last)))
assert np.mean(last) < np.mean(first) - 0.5, (first, last)
with open('sample.txt') as f:
    written = f.read()
assert 0 < len(written.split()) <= num_samples and written.count(' ') + written.count('\n') == num_samples

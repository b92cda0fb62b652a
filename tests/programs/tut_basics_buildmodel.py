"""Learn the Basics - Build the Neural Network, from the PyTorch tutorials.

Source: https://github.com/pytorch/tutorials/blob/07a339ece661a2b304b8834780470f522eed1e02/beginner_source/basics/buildmodel_tutorial.py
Licence: BSD-3-Clause (Copyright (c) 2017-2022, Pytorch contributors).

Changes in the port:
- imports: torch -> autogradcli; torchvision (imported, unused) dropped; the tutorial's prose
  comments are dropped.
- torch.manual_seed(0) added; outcome: asserts what the page shows: print(model) gives the page's
  text exactly, the sizes printed ([3, 28, 28], [3, 784], [3, 20]), ReLU leaves no negative value,
  the softmax rows sum to 1, and the named parameters and their sizes are the page's.
"""

import os
import autogradcli as torch
from autogradcli import nn
from autogradcli.utils.data import DataLoader

torch.manual_seed(0)

device = 'cuda' if torch.cuda.is_available() else 'cpu'
print('Using {} device'.format(device))

class NeuralNetwork(nn.Module):
    def __init__(self):
        super(NeuralNetwork, self).__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
            nn.ReLU()
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits

model = NeuralNetwork().to(device)
print(model)
assert str(model) == """NeuralNetwork(
  (flatten): Flatten(start_dim=1, end_dim=-1)
  (linear_relu_stack): Sequential(
    (0): Linear(in_features=784, out_features=512, bias=True)
    (1): ReLU()
    (2): Linear(in_features=512, out_features=512, bias=True)
    (3): ReLU()
    (4): Linear(in_features=512, out_features=10, bias=True)
    (5): ReLU()
  )
)"""

X = torch.rand(1, 28, 28, device=device)
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred}")

input_image = torch.rand(3,28,28)
print(input_image.size())
assert input_image.size() == (3, 28, 28)

flatten = nn.Flatten()
flat_image = flatten(input_image)
print(flat_image.size())
assert flat_image.size() == (3, 784)

layer1 = nn.Linear(in_features=28*28, out_features=20)
hidden1 = layer1(flat_image)
print(hidden1.size())
assert hidden1.size() == (3, 20)

print(f"Before ReLU: {hidden1}\n\n")
hidden1 = nn.ReLU()(hidden1)
print(f"After ReLU: {hidden1}")
assert (hidden1 >= 0).all()

seq_modules = nn.Sequential(
    flatten,
    layer1,
    nn.ReLU(),
    nn.Linear(20, 10)
)
input_image = torch.rand(3,28,28)
logits = seq_modules(input_image)

softmax = nn.Softmax(dim=1)
pred_probab = softmax(logits)
assert torch.allclose(pred_probab.sum(1), torch.ones(3))

print("Model structure: ", model, "\n\n")

for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")

assert [(name, tuple(param.size())) for name, param in model.named_parameters()] == [
    ("linear_relu_stack.0.weight", (512, 784)), ("linear_relu_stack.0.bias", (512,)),
    ("linear_relu_stack.2.weight", (512, 512)), ("linear_relu_stack.2.bias", (512,)),
    ("linear_relu_stack.4.weight", (10, 512)), ("linear_relu_stack.4.bias", (10,)),
]

"""Learn the Basics - Quickstart (the FashionMNIST MLP), from the PyTorch tutorials.

Source: https://github.com/pytorch/tutorials/blob/07a339ece661a2b304b8834780470f522eed1e02/beginner_source/basics/quickstart_tutorial.py
Licence: BSD-3-Clause (Copyright (c) 2017-2022, Pytorch contributors).

Changes in the port:
- imports: torch -> autogradcli; torchvision (datasets, ToTensor) dropped; the tutorial's prose
  comments are dropped.
- data: FashionMNIST -> the bundled 8x8 digits in [0, 1] (as ToTensor gives), each pixel repeated
  3x3 and padded by 2 to 1x28x28 (1,500 for training, 297 for testing); the labels keep
  FashionMNIST's class names.
- torch.manual_seed(0) added; test() returns its average loss, and the program asserts the test
  loss after the last epoch is below the one after the first.
"""
import autogradcli as torch
from autogradcli import nn
from autogradcli.utils.data import DataLoader, TensorDataset
import numpy as np
from autogradcli.data import load_digits

torch.manual_seed(0)

images, labels = load_digits().tensors
images = np.pad(np.kron(images.numpy(), np.ones((1, 1, 3, 3), dtype=np.float32)), ((0, 0), (0, 0), (2, 2), (2, 2)))
images = torch.from_numpy(images)

# Download training data from open datasets.
training_data = TensorDataset(images[:1500], labels[:1500])

# Download test data from open datasets.
test_data = TensorDataset(images[1500:], labels[1500:])

batch_size = 64

# Create data loaders.
train_dataloader = DataLoader(training_data, batch_size=batch_size)
test_dataloader = DataLoader(test_data, batch_size=batch_size)

for X, y in test_dataloader:
    print("Shape of X [N, C, H, W]: ", X.shape)
    print("Shape of y: ", y.shape, y.dtype)
    break

# Get cpu or gpu device for training.
device = "cuda" if torch.cuda.is_available() else "cpu"
print("Using {} device".format(device))

# Define model
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

loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)


def train(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)

        # Compute prediction error
        pred = model(X)
        loss = loss_fn(pred, y)

        # Backpropagation
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if batch % 100 == 0:
            loss, current = loss.item(), batch * len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test(dataloader, model, loss_fn):
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
    return test_loss

epochs = 5
test_losses = []
for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train(train_dataloader, model, loss_fn, optimizer)
    test_losses.append(test(test_dataloader, model, loss_fn))
print("Done!")
assert test_losses[-1] < test_losses[0], test_losses

torch.save(model.state_dict(), "model.pth")
print("Saved PyTorch Model State to model.pth")

model = NeuralNetwork()
model.load_state_dict(torch.load("model.pth"))

classes = [
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
]

model.eval()
x, y = test_data[0][0], test_data[0][1]
with torch.no_grad():
    pred = model(x)
    predicted, actual = classes[pred[0].argmax(0)], classes[y]
    print(f'Predicted: "{predicted}", Actual: "{actual}"')

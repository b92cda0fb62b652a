"""Deep Learning with PyTorch: A 60 Minute Blitz - Training a Classifier (the CIFAR-10 convnet).

Source: https://github.com/pytorch/tutorials/blob/04e3d04bcf91d38a1213918eba70dc43e9b0ce45/beginner_source/blitz/cifar10_tutorial.py
Licence: BSD-3-Clause (Copyright (c) 2017-2022, Pytorch contributors).

Changes in the port:
- imports: torch -> autogradcli; torchvision and matplotlib dropped (imshow calls removed); the
  tutorial's prose comments are dropped.
- data: CIFAR-10 -> the bundled 8x8 digits as 3x32x32 images (each pixel repeated 4x4, the grey
  level copied to 3 channels), normalised as transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5));
  1,000 for training and 296 for testing (a multiple of the batch size 4, as CIFAR's 10,000 is,
  which the per-class loop needs). The digit labels keep CIFAR's class names.
- prints every 100 mini-batches instead of every 2000.
- repaired: `dataiter.next()` (gone from Python 3 iterators in PyTorch's DataLoader) -> `next(dataiter)`,
  as the current tutorial writes it.
- torch.manual_seed(0) added; outcome: asserts the test accuracy is above 30% (chance is 10%).
"""
import autogradcli as torch
import numpy as np
from autogradcli.data import load_digits

torch.manual_seed(0)

images, labels = load_digits().tensors
images = np.kron(images.numpy(), np.ones((1, 3, 4, 4), dtype=np.float32))  # 3x32x32
images = torch.from_numpy((images - 0.5) / 0.5)  # Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))

trainset = torch.utils.data.TensorDataset(images[:1000], labels[:1000])
trainloader = torch.utils.data.DataLoader(trainset, batch_size=4,
                                          shuffle=True, num_workers=2)

testset = torch.utils.data.TensorDataset(images[1000:1296], labels[1000:1296])
testloader = torch.utils.data.DataLoader(testset, batch_size=4,
                                         shuffle=False, num_workers=2)

classes = ('plane', 'car', 'bird', 'cat',
           'deer', 'dog', 'frog', 'horse', 'ship', 'truck')

# get some random training images
dataiter = iter(trainloader)
images, labels = next(dataiter)

# print labels
print(' '.join('%5s' % classes[labels[j]] for j in range(4)))


import autogradcli.nn as nn
import autogradcli.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()

import autogradcli.optim as optim

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

for epoch in range(2):  # loop over the dataset multiple times

    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels = data

        # zero the parameter gradients
        optimizer.zero_grad()

        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        # print statistics
        running_loss += loss.item()
        if i % 100 == 99:    # print every 100 mini-batches
            print('[%d, %5d] loss: %.3f' %
                  (epoch + 1, i + 1, running_loss / 100))
            running_loss = 0.0

print('Finished Training')

dataiter = iter(testloader)
images, labels = next(dataiter)

print('GroundTruth: ', ' '.join('%5s' % classes[labels[j]] for j in range(4)))

outputs = net(images)

_, predicted = torch.max(outputs, 1)

print('Predicted: ', ' '.join('%5s' % classes[predicted[j]]
                              for j in range(4)))

correct = 0
total = 0
with torch.no_grad():
    for data in testloader:
        images, labels = data
        outputs = net(images)
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()

print('Accuracy of the network on the 10000 test images: %d %%' % (
    100 * correct / total))
assert correct / total > 0.3, correct / total

class_correct = list(0. for i in range(10))
class_total = list(0. for i in range(10))
with torch.no_grad():
    for data in testloader:
        images, labels = data
        outputs = net(images)
        _, predicted = torch.max(outputs, 1)
        c = (predicted == labels).squeeze()
        for i in range(4):
            label = labels[i]
            class_correct[label] += c[i].item()
            class_total[label] += 1


for i in range(10):
    print('Accuracy of %5s : %2d %%' % (
        classes[i], 100 * class_correct[i] / class_total[i]))

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

print(device)

del dataiter

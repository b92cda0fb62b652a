# fmt: off
# ruff: noqa
"""Seed 001, block 1: the blitz's LeNet-style ``Net`` (two convolutions, three linear layers), printed.

Source: shared/seeds/001_ab43ad7be7a57c4c.txt ("Pytorch使用autograd.Function自定义拓展神经网络",
a Chinese CSDN tutorial on custom ``autograd.Function``), first code block.

Changes made in the port: the imports (``torch`` -> ``autogradcli``). Outcome checks added at the
end: ``print(net)`` shows PyTorch's text for this network, and a 32x32 image (the size the
``6*6`` comment assumes) gives 10 outputs.
"""

import autogradcli as torch
import autogradcli.nn as nn
import autogradcli.nn.functional as F


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        # 1 input image channel, 6 output channels, 3x3 square convolution
        # kernel
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 6 * 6, 120)  # 6*6 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        # Max pooling over a (2, 2) window
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        # If the size is a square you can only specify a single number
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, self.num_flat_features(x))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x

    def num_flat_features(self, x):
        size = x.size()[1:]  # all dimensions except the batch dimension
        num_features = 1
        for s in size:
            num_features *= s
        return num_features


net = Net()
print(net)

# ---- outcome checks (not in the page) ----
EXPECTED = """Net(
  (conv1): Conv2d(1, 6, kernel_size=(3, 3), stride=(1, 1))
  (conv2): Conv2d(6, 16, kernel_size=(3, 3), stride=(1, 1))
  (fc1): Linear(in_features=576, out_features=120, bias=True)
  (fc2): Linear(in_features=120, out_features=84, bias=True)
  (fc3): Linear(in_features=84, out_features=10, bias=True)
)"""
assert str(net) == EXPECTED, str(net)
out = net(torch.randn(1, 1, 32, 32))
assert out.shape == (1, 10)
out.sum().backward()
assert net.conv1.weight.grad.shape == (6, 1, 3, 3)

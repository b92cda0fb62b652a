"""Sub-pixel convolution super-resolution (ESPCN), ported from pytorch/examples super_resolution/
(model.py and main.py, in one file).

Source: https://github.com/pytorch/examples/tree/77f55b912142e11fcfdf5b530231fb9c52f181e8/super_resolution
Licence: BSD-3-Clause (Copyright (c) 2017, Pytorch contributors).

Changes in the port:
- imports: torch -> autogradcli; model.py's Net is inlined; data.py (BSDS300 download, PIL and
  torchvision transforms) -> the bundled 8x8 digits as high-resolution targets and their 2x2
  averages (4x4) as inputs (first 1,500 for training, the rest for testing).
- --upscale_factor: required -> default 2; --threads default 4 -> 1.
- train() returns the epoch's average loss, and the program asserts it falls.
"""
from __future__ import print_function
import argparse
from math import log10

import numpy as np
import autogradcli as torch
import autogradcli.nn as nn
import autogradcli.nn.init as init
import autogradcli.optim as optim
from autogradcli.utils.data import DataLoader, TensorDataset
from autogradcli.data import load_digits


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()

        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


def get_set(upscale_factor, part):
    # stands in for data.py: high-resolution digits and their block averages
    target = load_digits().tensors[0].numpy()[part]
    n, c, h, w = target.shape
    f = upscale_factor
    input = target.reshape(n, c, h // f, f, w // f, f).mean(axis=(3, 5))
    return TensorDataset(torch.from_numpy(np.ascontiguousarray(input)), torch.from_numpy(target.copy()))


def get_training_set(upscale_factor):
    return get_set(upscale_factor, slice(0, 1500))


def get_test_set(upscale_factor):
    return get_set(upscale_factor, slice(1500, None))


# Training settings
parser = argparse.ArgumentParser(description='PyTorch Super Res Example')
parser.add_argument('--upscale_factor', type=int, default=2, help="super resolution upscale factor")
parser.add_argument('--batchSize', type=int, default=64, help='training batch size')
parser.add_argument('--testBatchSize', type=int, default=10, help='testing batch size')
parser.add_argument('--nEpochs', type=int, default=2, help='number of epochs to train for')
parser.add_argument('--lr', type=float, default=0.01, help='Learning Rate. Default=0.01')
parser.add_argument('--accel', action='store_true', help='Enables acceleration for training, if available')
parser.add_argument('--threads', type=int, default=1, help='number of threads for data loader to use')
parser.add_argument('--seed', type=int, default=123, help='random seed to use. Default=123')
opt = parser.parse_args()

print(opt)

torch.manual_seed(opt.seed)

if opt.accel and torch.accelerator.is_available():
    device = torch.accelerator.current_accelerator()
else:
    device = torch.device("cpu")

print('===> Loading datasets')
train_set = get_training_set(opt.upscale_factor)
test_set = get_test_set(opt.upscale_factor)
training_data_loader = DataLoader(dataset=train_set, num_workers=opt.threads, batch_size=opt.batchSize, shuffle=True)
testing_data_loader = DataLoader(dataset=test_set, num_workers=opt.threads, batch_size=opt.testBatchSize, shuffle=False)

print('===> Building model')
model = Net(upscale_factor=opt.upscale_factor).to(device)
criterion = nn.MSELoss()

optimizer = optim.Adam(model.parameters(), lr=opt.lr)


def train(epoch):
    epoch_loss = 0
    for iteration, batch in enumerate(training_data_loader, 1):
        input, target = batch[0].to(device), batch[1].to(device)

        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()

        print("===> Epoch[{}]({}/{}): Loss: {:.4f}".format(epoch, iteration, len(training_data_loader), loss.item()))

    print("===> Epoch {} Complete: Avg. Loss: {:.4f}".format(epoch, epoch_loss / len(training_data_loader)))
    return epoch_loss / len(training_data_loader)


def test():
    avg_psnr = 0
    with torch.no_grad():
        for batch in testing_data_loader:
            input, target = batch[0].to(device), batch[1].to(device)

            prediction = model(input)
            mse = criterion(prediction, target)
            psnr = 10 * log10(1 / mse.item())
            avg_psnr += psnr
    print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))


def checkpoint(epoch):
    model_out_path = "model_epoch_{}.pth".format(epoch)
    torch.save(model, model_out_path)
    print("Checkpoint saved to {}".format(model_out_path))

losses = []
for epoch in range(1, opt.nEpochs + 1):
    losses.append(train(epoch))
    test()
    checkpoint(epoch)
assert losses[-1] < losses[0], losses

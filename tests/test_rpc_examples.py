"""pytorch/examples' distributed/rpc/rnn, ported by renaming ``torch`` to ``autogradcli``: an RNN
whose embedding table and decoder live on a parameter server, trained by a trainer with
distributed autograd and a DistributedOptimizer.

Source: https://github.com/pytorch/examples/tree/main/distributed/rpc/rnn (main.py, rnn.py).
Licence: BSD-3-Clause (Copyright (c) 2017, Pytorch contributors).

Changes in the port: imports torch -> autogradcli; rnn.py's classes are in this file; the
master port is a free one (tests run side by side); 10 epochs -> 3; the processes fork (the
source spawns); the trainer checks that every parameter (remote and local) was trained and that
the losses are finite.
"""

from __future__ import annotations

import math
import os

from test_rpc import free_port

import autogradcli as torch
import autogradcli.distributed.autograd as dist_autograd
import autogradcli.distributed.rpc as rpc
import autogradcli.multiprocessing as mp
import autogradcli.nn as nn
import autogradcli.optim as optim
from autogradcli.distributed.optim import DistributedOptimizer
from autogradcli.distributed.rpc import RRef

# ----------------------------------------------------------------- rnn.py


def _call_method(method, rref, *args, **kwargs):
    r"""
    a helper function to call a method on the given RRef
    """
    return method(rref.local_value(), *args, **kwargs)


def _remote_method(method, rref, *args, **kwargs):
    r"""
    a helper function to run method on the owner of rref and fetch back the
    result using RPC
    """
    return rpc.rpc_sync(rref.owner(), _call_method, args=[method, rref] + list(args), kwargs=kwargs)


def _parameter_rrefs(module):
    r"""
    Create one RRef for each parameter in the given local module, and return a
    list of RRefs.
    """
    param_rrefs = []
    for param in module.parameters():
        param_rrefs.append(RRef(param))
    return param_rrefs


class EmbeddingTable(nn.Module):
    r"""
    Encoding layers of the RNNModel
    """

    def __init__(self, ntoken, ninp, dropout):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if torch.accelerator.is_available():
            device = torch.accelerator.current_accelerator()
            self.encoder = self.encoder.to(device)
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)

    def forward(self, input):
        if torch.accelerator.is_available():
            device = torch.accelerator.current_accelerator()
            input = input.to(device)
        return self.drop(self.encoder(input)).cpu()


class Decoder(nn.Module):
    r"""
    Decoding layers of the RNNModel
    """

    def __init__(self, ntoken, nhid, dropout):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, output):
        return self.decoder(self.drop(output))


class RNNModel(nn.Module):
    r"""
    A distributed RNN model which puts embedding table and decoder parameters on
    a remote parameter server, and locally holds parameters for the LSTM module.
    """

    def __init__(self, ps, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super().__init__()

        # setup embedding table remotely
        self.emb_table_rref = rpc.remote(ps, EmbeddingTable, args=(ntoken, ninp, dropout))
        # setup LSTM locally
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        # setup decoder remotely
        self.decoder_rref = rpc.remote(ps, Decoder, args=(ntoken, nhid, dropout))

    def forward(self, input, hidden):
        # pass input to the remote embedding table and fetch emb tensor back
        emb = _remote_method(EmbeddingTable.forward, self.emb_table_rref, input)
        output, hidden = self.rnn(emb, hidden)
        # pass output to the remote decoder and get the decoded output back
        decoded = _remote_method(Decoder.forward, self.decoder_rref, output)
        return decoded, hidden

    def parameter_rrefs(self):
        remote_params = []
        # get RRefs of embedding table
        remote_params.extend(_remote_method(_parameter_rrefs, self.emb_table_rref))
        # create RRefs for local parameters
        remote_params.extend(_parameter_rrefs(self.rnn))
        # get RRefs of decoder
        remote_params.extend(_remote_method(_parameter_rrefs, self.decoder_rref))
        return remote_params


# ----------------------------------------------------------------- main.py


def _run_trainer():
    r"""
    The trainer creates a distributed RNNModel and a DistributedOptimizer. Then,
    it performs training using random input data.
    """
    batch = 5
    ntoken = 7
    ninp = 2

    nhid = 3
    nindices = 6
    nlayers = 4
    hidden = (torch.randn(nlayers, nindices, nhid), torch.randn(nlayers, nindices, nhid))

    model = rnn_RNNModel("ps", ntoken, ninp, nhid, nlayers)

    # setup distributed optimizer
    opt = DistributedOptimizer(
        optim.SGD,
        model.parameter_rrefs(),
        lr=0.05,
    )
    before = [p.to_here().clone() for p in model.parameter_rrefs()]  # port: the check below

    criterion = torch.nn.CrossEntropyLoss()

    def get_next_batch():
        for _ in range(5):
            data = torch.LongTensor(batch, nindices) % ntoken
            target = torch.LongTensor(batch, ntoken) % nindices
            yield data, target

    # train for 10 iterations
    for epoch in range(3):
        # create distributed autograd context
        for data, target in get_next_batch():
            with dist_autograd.context() as context_id:
                hidden[0].detach_()
                hidden[1].detach_()
                output, hidden = model(data, hidden)
                loss = criterion(output, target)
                assert math.isfinite(loss.item())  # port: the check
                # run distributed backward pass
                dist_autograd.backward(context_id, [loss])
                # run distributed optimizer
                opt.step(context_id)
                # not necessary to zero grads as each iteration creates a different
                # distributed autograd context which hosts different grads
        print(f"Training epoch {epoch}")
    after = [p.to_here() for p in model.parameter_rrefs()]  # port: every parameter trained
    assert len(after) == 1 + 4 * 4 + 2  # embedding, LSTM (4 layers), decoder
    assert all(not torch.equal(a, b) for a, b in zip(before, after))


rnn_RNNModel = RNNModel  # main.py reaches it as rnn.RNNModel


def run_worker(rank, world_size, port):
    r"""
    A wrapper function that initializes RPC, calls the function, and shuts down
    RPC.
    """
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    if rank == 1:
        rpc.init_rpc("trainer", rank=rank, world_size=world_size)
        _run_trainer()
    else:
        rpc.init_rpc("ps", rank=rank, world_size=world_size)
        # parameter server does nothing
        pass

    # block until all rpcs finish
    rpc.shutdown()


def test_rnn_example_trains_every_parameter():
    world_size = 2
    mp.spawn(
        run_worker,
        args=(world_size, free_port()),
        nprocs=world_size,
        join=True,
        start_method="fork",
    )

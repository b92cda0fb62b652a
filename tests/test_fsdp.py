"""FullyShardedDataParallel / fully_shard: against torch's FSDP on one gloo rank (repr, names,
state dict, training), the wrap policies against torch's own recursive wrapping, and on 1 and 2
ranks under mpiexec against DDP and one-process training (tests/programs/distributed)."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from programs.distributed.mpirun import check, run_mpi

import autogradcli as ag
import autogradcli.nn as nn
from autogradcli.distributed import process_group
from autogradcli.distributed.backend_base import Backend, Pending
from autogradcli.distributed.fsdp import (
    FSDPModule,
    FullStateDictConfig,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictType,
    _sync,
    fully_shard,
)
from autogradcli.distributed.fsdp import FullyShardedDataParallel as FSDP
from autogradcli.distributed.fsdp import wrap as ag_wrap


class Solo(Backend):
    """A one-rank group in this process: every collective is the identity."""

    name = "solo"
    rank, size, timeout = 0, 1, 60.0

    def all_reduce(self, arr, op, *name):
        return Pending(lambda: None)

    def broadcast(self, arr, src, *name):
        return Pending(lambda: None)


def make_classes(mod, attention=False):
    """The same model structure over ``mod`` (torch.nn or autogradcli.nn); ``attention`` adds
    an unused MultiheadAttention (for the size policy, which never looks inside one)."""

    class Block(mod.Module):
        def __init__(self):
            super().__init__()
            self.fc = mod.Linear(4, 4)
            self.act = mod.ReLU()

        def forward(self, x):
            return self.act(self.fc(x)) + x

    class Net(mod.Module):
        def __init__(self):
            super().__init__()
            self.emb = mod.Linear(3, 4)
            self.blocks = mod.ModuleList([Block(), Block()])
            self.mix = mod.Sequential(mod.Linear(4, 4), mod.Tanh())
            self.head = mod.Linear(4, 2)
            if attention:
                self.attn = mod.MultiheadAttention(4, 2)

        def forward(self, x):
            x = self.emb(x)
            for b in self.blocks:
                x = b(x)
            return self.head(self.mix(x))

    return Block, Net


def twin(torch, attention=False):
    """A torch Net and an autogradcli Net holding the same weights."""
    TBlock, TNet = make_classes(torch.nn, attention)
    Block, Net = make_classes(nn, attention)
    torch.manual_seed(0)
    t = TNet()
    m = Net()
    m.load_state_dict({k: ag.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return (TBlock, t), (Block, m)


@pytest.fixture
def torch_gloo(tmp_path):
    torch = pytest.importorskip("torch")
    dist = torch.distributed
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    dist.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1
    )
    try:
        yield torch
    finally:
        dist.destroy_process_group()


@pytest.mark.filterwarnings("ignore:When using ``NO_SHARD``:UserWarning")
def test_fsdp_matches_torch_fsdp_on_one_rank(torch_gloo):
    torch = torch_gloo
    from torch.distributed.fsdp import FullStateDictConfig as TFullConfig
    from torch.distributed.fsdp import FullyShardedDataParallel as TFSDP
    from torch.distributed.fsdp import ShardedStateDictConfig as TShardedConfig
    from torch.distributed.fsdp import StateDictType as TType
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy as t_policy

    (TBlock, t), (Block, m) = twin(torch, attention=True)  # unused: zero grads, as torch's
    plain_keys = list(m.state_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tf = TFSDP(
            t,
            auto_wrap_policy=functools.partial(t_policy, transformer_layer_cls={TBlock}),
            device_id=torch.device("cpu"),
            use_orig_params=True,
        )
        f = FSDP(
            m,
            process_group=Solo(),
            auto_wrap_policy=functools.partial(
                ag_wrap.transformer_auto_wrap_policy, transformer_layer_cls={Block}
            ),
            device_id=None,
            use_orig_params=True,
        )
    assert repr(f) == repr(tf)
    assert [n for n, _ in f.named_parameters()] == [n for n, _ in tf.named_parameters()]
    with FSDP.summon_full_params(f), TFSDP.summon_full_params(tf):
        assert [n for n, _ in f.named_parameters()] == [n for n, _ in tf.named_parameters()]
    assert next(n for n, _ in f.named_parameters()).startswith("_fsdp_wrapped_module.")
    assert repr(FSDP.get_state_dict_type(f)) == repr(TFSDP.get_state_dict_type(tf))
    assert f.module is m and f.blocks is m.blocks and type(f.blocks[0]) is FSDP

    gen = np.random.default_rng(1)
    x, y = gen.standard_normal((5, 3), np.float32), gen.standard_normal((5, 2), np.float32)
    to = torch.optim.SGD(tf.parameters(), lr=0.1, momentum=0.9)
    mo = ag.optim.SGD(f.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        to.zero_grad()
        mo.zero_grad()
        ((tf(torch.tensor(x)) - torch.tensor(y)) ** 2).mean().backward()
        ((f(ag.tensor(x)) - ag.tensor(y)) ** 2).mean().backward()
        tn, mn = tf.clip_grad_norm_(0.5), f.clip_grad_norm_(0.5)
        np.testing.assert_allclose(mn.numpy(), tn.numpy(), rtol=1e-5)
        to.step()
        mo.step()
    for kw in ({}, {"offload_to_cpu": True, "rank0_only": True}):
        cfg = FullStateDictConfig(**kw)
        with (
            pytest.warns(FutureWarning, match=r"FSDP.state_dict_type\(\) and") as w,
            FSDP.state_dict_type(f, StateDictType.FULL_STATE_DICT, cfg),
        ):
            sd = f.state_dict()
        assert w[0].filename == __file__
        with (
            pytest.warns(FutureWarning) as tw,
            TFSDP.state_dict_type(tf, TType.FULL_STATE_DICT, TFullConfig(**kw)),
        ):
            tsd = tf.state_dict()
        assert str(w[0].message) == str(tw[0].message)
        assert list(sd) == list(tsd) == plain_keys
        for k in tsd:
            np.testing.assert_allclose(sd[k].numpy(), tsd[k].numpy(), rtol=1e-5, atol=1e-6)
    assert FSDP.get_state_dict_type(f).state_dict_config == FullStateDictConfig()  # restored

    osd, tosd = FSDP.optim_state_dict(f, mo), TFSDP.optim_state_dict(tf, to)
    assert list(osd["state"]) == list(tosd["state"]), (list(osd["state"]), list(tosd["state"]))
    assert osd["param_groups"][0]["params"] == tosd["param_groups"][0]["params"]
    for k, v in tosd["state"].items():
        np.testing.assert_allclose(
            osd["state"][k]["momentum_buffer"].numpy(),
            v["momentum_buffer"].numpy(),
            rtol=1e-5,
            atol=1e-6,
        )
    back = FSDP.optim_state_dict_to_load(f, mo, osd)
    assert back["param_groups"] == mo.state_dict()["param_groups"]
    assert list(back["state"]) == list(TFSDP.optim_state_dict_to_load(tf, to, tosd)["state"])
    with pytest.warns(FutureWarning) as w:
        full = FSDP.full_optim_state_dict(f, mo)
    with pytest.warns(FutureWarning) as tw:
        TFSDP.full_optim_state_dict(tf, to)
    assert str(w[0].message) == str(tw[0].message) and list(full["state"]) == list(osd["state"])
    match = "Expected state_dict_config of type"
    with pytest.raises(RuntimeError, match=match) as ours, pytest.warns(FutureWarning):
        FSDP.set_state_dict_type(f, StateDictType.FULL_STATE_DICT, ShardedStateDictConfig())
    with pytest.raises(RuntimeError) as theirs, pytest.warns(FutureWarning):
        TFSDP.set_state_dict_type(tf, TType.FULL_STATE_DICT, TShardedConfig())
    assert type(ours.value) is type(theirs.value)


def test_state_dict_round_trip_and_rank0_only_off_rank_0():
    _, Net = make_classes(nn)
    ag.manual_seed(0)
    plain = Net()
    policy = ag_wrap.ModuleWrapPolicy({nn.Linear})
    f = FSDP(Net(), process_group=Solo(), auto_wrap_policy=policy)
    f.load_state_dict(plain.state_dict())  # the unwrapped keys load
    for k, v in f.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), plain.state_dict()[k].numpy())
    sd = f.state_dict()
    sd["head.bias"].add_(1.0)  # a copy, as torch's full state dict is
    assert not np.array_equal(sd["head.bias"].numpy(), f.module.head.bias.detach().numpy())
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "head.bias"'):
        f.load_state_dict({k: v for k, v in plain.state_dict().items() if k != "head.bias"})
    other = Solo()
    other.rank, other.size = 1, 2
    f._sync.pg = other  # what rank 1 of two would see
    cfg = FullStateDictConfig(rank0_only=True)
    with pytest.warns(FutureWarning), FSDP.state_dict_type(f, StateDictType.FULL_STATE_DICT, cfg):
        assert f.state_dict() == {}
    assert len(f.state_dict()) == len(plain.state_dict())
    opt = ag.optim.SGD(f.parameters(), lr=0.1)
    with pytest.warns(FutureWarning, match="full_optim_state_dict``is being deprecated"):
        assert FSDP.full_optim_state_dict(f, opt) == {}  # rank0_only by default
    with pytest.warns(FutureWarning):
        assert len(FSDP.full_optim_state_dict(f, opt, rank0_only=False)["param_groups"]) == 1


def _torch_wrapped(torch, model, policy):
    from torch.distributed.fsdp.wrap import _recursive_wrap

    class Unit(torch.nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    _recursive_wrap(model, policy, Unit, set(), set(), only_wrap_children=True)
    return sorted(n.replace("module.", "") for n, x in model.named_modules() if type(x) is Unit)


def _ours_wrapped(model, policy):
    f = FSDP(model, process_group=Solo(), auto_wrap_policy=policy)
    return sorted(
        n.replace("_fsdp_wrapped_module.", "")
        for n, x in f.module.named_modules()
        if isinstance(x, FSDP)
    )


@pytest.mark.parametrize(
    "name, args",
    [
        ("transformer_auto_wrap_policy", {}),
        (
            "size_based_auto_wrap_policy",
            {"min_num_params": 20},
        ),  # a block's Linear holds exactly 20
        ("size_based_auto_wrap_policy", {"min_num_params": 21}),
        ("size_based_auto_wrap_policy", {"min_num_params": 40}),  # the ModuleList: excluded
        ("size_based_auto_wrap_policy", {"min_num_params": 80}),  # attention holds exactly 80
        ("ModuleWrapPolicy", {}),
        ("lambda_auto_wrap_policy", {}),
    ],
)
def test_wrap_policies_select_what_torchs_select(name, args):
    torch = pytest.importorskip("torch")
    from torch.distributed.fsdp import wrap as t_wrap

    (TBlock, t), (Block, m) = twin(torch, attention=True)

    def policy(mod, block):
        if name == "transformer_auto_wrap_policy":
            return functools.partial(
                mod.transformer_auto_wrap_policy, transformer_layer_cls={block}
            )
        if name == "ModuleWrapPolicy":
            return mod.ModuleWrapPolicy({block})
        if name == "lambda_auto_wrap_policy":
            fn = lambda x: type(x).__name__ in ("Sequential", "Block")
            return functools.partial(mod.lambda_auto_wrap_policy, lambda_fn=fn)
        return functools.partial(getattr(mod, name), **args)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _ours_wrapped(m, policy(ag_wrap, Block))
    theirs = _torch_wrapped(torch, t, policy(t_wrap, TBlock))
    assert ours == theirs
    assert ours or name == "size_based_auto_wrap_policy"
    if args.get("min_num_params") == 20:
        assert "blocks.0.fc" in ours  # 20 parameters: just inside the threshold
    if args.get("min_num_params") == 21:
        assert "blocks.0.fc" not in ours
    if name == "size_based_auto_wrap_policy":  # attention is a forced leaf: never a unit
        assert not any(n.startswith("attn") for n in ours)


def test_enable_wrap_and_wrap_as_torchs():
    torch = pytest.importorskip("torch")
    from torch.distributed.fsdp import wrap as t_wrap

    class Unit(torch.nn.Module):
        def __init__(self, module, **kwargs):
            super().__init__()
            self.module, self.kwargs = module, kwargs

    lin, tlin = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    assert ag_wrap.wrap(lin) is lin and t_wrap.wrap(tlin) is tlin  # outside: unchanged
    solo = Solo()
    with ag_wrap.enable_wrap(wrapper_cls=FSDP, process_group=solo):
        inner = ag_wrap.wrap(lin, sharding_strategy=ShardingStrategy.NO_SHARD)
    with t_wrap.enable_wrap(wrapper_cls=Unit, process_group="pg"):
        tinner = t_wrap.wrap(tlin, sharding_strategy="NO_SHARD")
    assert type(inner) is FSDP and inner.module is lin and inner.process_group is solo
    assert inner.sharding_strategy is ShardingStrategy.NO_SHARD
    assert tinner.kwargs == {"process_group": "pg", "sharding_strategy": "NO_SHARD"}
    assert ag_wrap.wrap(lin) is lin


def test_no_sharding_is_said_once_and_no_shard_says_nothing(monkeypatch):
    monkeypatch.setattr(_sync, "_NOTED", set())
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        FSDP(nn.Linear(2, 2), process_group=Solo(), sharding_strategy=ShardingStrategy.NO_SHARD)
        assert not seen
        FSDP(nn.Linear(2, 2), process_group=Solo())
        FSDP(nn.Linear(2, 2), process_group=Solo(), sharding_strategy=ShardingStrategy.HYBRID_SHARD)
    assert len(seen) == 1 and "FULL_SHARD keeps the full parameters" in str(seen[0].message)
    assert seen[0].filename == __file__


def test_fully_shard_keeps_names_trains_as_plain_and_can_skip_sync(monkeypatch):
    _, Net = make_classes(nn)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        fully_shard(Net())
    monkeypatch.setattr(process_group.STATE, "backend", Solo())
    ag.manual_seed(0)
    plain, m = Net(), Net()
    m.load_state_dict(plain.state_dict())
    names = [n for n, _ in m.named_parameters()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for b in m.blocks:
            fully_shard(b)
        assert fully_shard(m) is m
    assert type(m).__name__ == "FSDPNet" and isinstance(m, (FSDPModule, Net))
    assert type(m.blocks[0]).__name__ == "FSDPBlock"
    assert [n for n, _ in m.named_parameters()] == names == list(m.state_dict())
    assert m._fsdp_sync is not None and m.blocks[0]._fsdp_sync is None  # the root averages
    x = ag.randn(5, 3)
    po, mo = ag.optim.SGD(plain.parameters(), lr=0.1), ag.optim.SGD(m.parameters(), lr=0.1)
    for step in range(2):
        m.set_requires_gradient_sync(step == 0)
        for mod, opt in ((plain, po), (m, mo)):
            opt.zero_grad()
            mod(x).pow(2).mean().backward()
            opt.step()
    for k, v in plain.state_dict().items():
        np.testing.assert_allclose(m.state_dict()[k].numpy(), v.numpy(), rtol=1e-6, atol=1e-7)


def test_fully_shard_as_torchs_on_one_rank(torch_gloo, monkeypatch):
    torch = torch_gloo
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard as t_fully_shard

    monkeypatch.setattr(process_group.STATE, "backend", Solo())
    (_, t), (_, m) = twin(torch, attention=True)  # attention: unused by forward
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for tb, b in zip(t.blocks, m.blocks, strict=True):
            t_fully_shard(tb, mesh=init_device_mesh("cpu", (1,)))
            fully_shard(b)
        t_fully_shard(t, mesh=init_device_mesh("cpu", (1,)))
        fully_shard(m)
    assert type(m).__name__ == type(t).__name__ and type(m.blocks[1]).__name__ == "FSDPBlock"
    assert list(m.state_dict()) == list(t.state_dict())
    x = np.random.default_rng(2).standard_normal((5, 3), np.float32)
    t(torch.tensor(x)).pow(2).mean().backward()
    m(ag.tensor(x)).pow(2).mean().backward()
    tg = {n: p.grad for n, p in t.named_parameters()}
    for n, p in m.named_parameters():
        assert (p.grad is None) == (tg[n] is None), n  # unused parameters: None, as torch's
        if p.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), tg[n].full_tensor().numpy(), atol=1e-6)


def test_fsdp_needs_a_process_group():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        FSDP(nn.Linear(2, 2))


@pytest.mark.mpi
@pytest.mark.parametrize("n", [1, 2])
def test_fsdp_and_fully_shard_equal_ddp_and_one_process(n):
    out = check(run_mpi(n, "fsdp_worker.py", timeout=300))
    steps = [line for line in out.splitlines() if line.startswith("step ")]
    assert len(steps) == 3 and all("fsdp == ddp == fully_shard" in s for s in steps), out
    assert "rank0_only state_dict: rank 0 has 8 keys" in out
    assert "no_sync: fsdp and fully_shard accumulate as ddp does" in out
    assert n == 1 or "rank0_only state_dict: rank 1 has {}" in out

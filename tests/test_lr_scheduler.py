"""lr schedulers against torch.optim.lr_scheduler: lr (and momentum) sequences over 40 steps with
two param groups, state-dict resume, closed forms and errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from lazy_torch import torch

import autogradcli as ag
from autogradcli import optim
from autogradcli.optim import lr_scheduler as S

T = torch.optim.lr_scheduler

STEPS = 40


def _opts(opt_name: str = "SGD", **kw: Any) -> tuple[Any, Any]:
    kw = kw or ({"momentum": 0.9} if opt_name == "SGD" else {})
    ours = getattr(optim, opt_name)(
        [
            {"params": [ag.zeros(2, requires_grad=True)]},
            {"params": [ag.zeros(3, requires_grad=True)], "lr": 0.5},
        ],
        lr=0.1,
        **kw,
    )
    theirs = getattr(torch.optim, opt_name)(
        [
            {"params": [torch.zeros(2, requires_grad=True)]},
            {"params": [torch.zeros(3, requires_grad=True)], "lr": 0.5},
        ],
        lr=0.1,
        **kw,
    )
    return ours, theirs


def _snapshot(opt: Any, sched: Any) -> tuple[Any, ...]:
    groups = opt.param_groups
    return (
        list(sched.get_last_lr()),
        [g["lr"] for g in groups],
        [g.get("momentum") for g in groups],
        [tuple(g["betas"]) if "betas" in g else None for g in groups],
    )


def _run(opt: Any, sched: Any, steps: int, metrics: list[float] | None = None) -> list[Any]:
    seq = [_snapshot(opt, sched)]
    for i in range(steps):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        seq.append(_snapshot(opt, sched))
    return seq


LAMBDA = lambda e: 0.95**e + 0.01 * (e % 3)

CASES: list[tuple[str, Callable[[Any, Any], Any], dict[str, Any]]] = [
    ("StepLR", lambda m, o: m.StepLR(o, step_size=7, gamma=0.5), {}),
    ("MultiStepLR", lambda m, o: m.MultiStepLR(o, milestones=[5, 12, 12, 30], gamma=0.3), {}),
    ("ExponentialLR", lambda m, o: m.ExponentialLR(o, gamma=0.93), {}),
    ("CosineAnnealingLR", lambda m, o: m.CosineAnnealingLR(o, T_max=10), {}),
    ("CosineAnnealingLR-eta", lambda m, o: m.CosineAnnealingLR(o, T_max=13, eta_min=0.01), {}),
    ("LinearLR", lambda m, o: m.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=9), {}),
    ("LinearLR-default", lambda m, o: m.LinearLR(o), {}),
    ("LambdaLR", lambda m, o: m.LambdaLR(o, LAMBDA), {}),
    ("LambdaLR-list", lambda m, o: m.LambdaLR(o, [LAMBDA, lambda e: 1.0 / (e + 1)]), {}),
    ("OneCycleLR-cos", lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=STEPS), {}),
    (
        "OneCycleLR-linear-3phase",
        lambda m, o: m.OneCycleLR(
            o,
            max_lr=[1.0, 2.0],
            epochs=4,
            steps_per_epoch=10,
            pct_start=0.25,
            anneal_strategy="linear",
            three_phase=True,
            div_factor=10.0,
            final_div_factor=100.0,
        ),
        {},
    ),
    (
        "OneCycleLR-adam-betas",
        lambda m, o: m.OneCycleLR(
            o, max_lr=0.3, total_steps=STEPS, base_momentum=[0.8, 0.7], max_momentum=0.9
        ),
        {"opt": "Adam"},
    ),
    (
        "OneCycleLR-no-momentum",
        lambda m, o: m.OneCycleLR(o, max_lr=0.3, total_steps=STEPS, cycle_momentum=False),
        {"opt": "Adagrad"},
    ),
    ("MultiplicativeLR", lambda m, o: m.MultiplicativeLR(o, lambda e: 0.9 + 0.01 * (e % 4)), {}),
    (
        "MultiplicativeLR-list",
        lambda m, o: m.MultiplicativeLR(o, [lambda e: 0.95, lambda e: 1.0 / (e + 1) + 0.5]),
        {},
    ),
    ("ConstantLR", lambda m, o: m.ConstantLR(o), {}),
    ("ConstantLR-7", lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=7), {}),
    ("PolynomialLR", lambda m, o: m.PolynomialLR(o), {}),
    ("PolynomialLR-2", lambda m, o: m.PolynomialLR(o, total_iters=30, power=2.0), {"opt": "Adam"}),
    ("CAWR", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=7), {}),
    ("CAWR-mult", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2), {}),
    (
        "CAWR-mult-eta",
        lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=3, eta_min=0.01),
        {"opt": "Adam"},
    ),
    (
        "SequentialLR",
        lambda m, o: m.SequentialLR(
            o,
            [m.LinearLR(o, start_factor=0.1, total_iters=5), m.CosineAnnealingLR(o, T_max=12)],
            milestones=[5],
        ),
        {},
    ),
    (
        "SequentialLR-3",
        lambda m, o: m.SequentialLR(
            o,
            [
                m.ExponentialLR(o, gamma=0.9),
                m.StepLR(o, step_size=4, gamma=0.5),
                m.MultiStepLR(o, milestones=[25, 30], gamma=0.1),
            ],
            milestones=[6, 20],
        ),
        {},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_sequence_matches_torch(case: Any) -> None:
    _, make, extra = case
    ours, theirs = _opts(extra.get("opt", "SGD"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no spurious warnings either
        seq = _run(ours, make(S, ours), STEPS)
    tseq = _run(theirs, make(T, theirs), STEPS)
    assert seq == tseq
    assert [g["initial_lr"] for g in ours.param_groups] == [
        g["initial_lr"] for g in theirs.param_groups
    ]


PLATEAU = [
    dict(),
    dict(mode="max", factor=0.5, patience=2, threshold=0.05, threshold_mode="abs", cooldown=2),
    dict(mode="min", factor=0.5, patience=1, threshold=0.1, cooldown=1, min_lr=[0.01, 0.2]),
    dict(mode="max", patience=0, threshold_mode="rel", min_lr=0.03, eps=1e-3),
]
METRICS = [1.0, 0.9, 0.95, 0.95, 0.89, 0.9, 0.9, 0.9, 0.88, 0.87, 0.87, 0.99] * 4


@pytest.mark.parametrize("kw", PLATEAU)
def test_reduce_on_plateau_matches_torch(kw: dict[str, Any]) -> None:
    ours, theirs = _opts()
    sched, tsched = S.ReduceLROnPlateau(ours, **kw), T.ReduceLROnPlateau(theirs, **kw)
    metrics = [m if i % 2 else -m for i, m in enumerate(METRICS)] if kw.get("mode") else METRICS
    seq = _run(ours, sched, len(metrics), metrics)
    assert seq == _run(theirs, tsched, len(metrics), metrics)
    assert (sched.best, sched.num_bad_epochs, sched.cooldown_counter) == (
        tsched.best,
        tsched.num_bad_epochs,
        tsched.cooldown_counter,
    )
    sched.step(ag.tensor(0.5))  # a one-element tensor metric


RESUME = [
    c
    for c in CASES
    if c[0]
    in ("StepLR", "MultiStepLR", "CosineAnnealingLR", "LambdaLR", "ConstantLR-7", "PolynomialLR-2")
]
RESUME += [c for c in CASES if c[0].startswith(("OneCycleLR-cos", "SequentialLR", "CAWR"))]


@pytest.mark.parametrize("case", RESUME, ids=[c[0] for c in RESUME])
def test_state_dict_resume(case: Any, tmp_path: Any) -> None:
    _, make, extra = case
    ours, theirs = _opts(extra.get("opt", "SGD"))
    sched = make(S, ours)
    _run(ours, sched, 15)
    path = tmp_path / "sched.agt"
    ag.save({"opt": ours.state_dict(), "sched": sched.state_dict()}, path)
    saved = ag.load(path)

    fresh, _ = _opts(extra.get("opt", "SGD"))
    new_sched = make(S, fresh)
    fresh.load_state_dict(saved["opt"])
    new_sched.load_state_dict(saved["sched"])
    assert new_sched.get_last_lr() == sched.get_last_lr()
    resumed = _run(fresh, new_sched, STEPS - 15)

    tsched = make(T, theirs)
    expected = _run(theirs, tsched, STEPS)[15:]
    assert resumed == expected


def test_plateau_state_dict_resume(tmp_path: Any) -> None:
    kw = dict(mode="min", factor=0.5, patience=1, cooldown=1)
    ours, theirs = _opts()
    sched = S.ReduceLROnPlateau(ours, **kw)
    _run(ours, sched, 10, METRICS)
    ag.save({"opt": ours.state_dict(), "sched": sched.state_dict()}, tmp_path / "p.agt")
    saved = ag.load(tmp_path / "p.agt")
    fresh, _ = _opts()
    new = S.ReduceLROnPlateau(fresh, **kw)
    fresh.load_state_dict(saved["opt"])
    new.load_state_dict(saved["sched"])
    resumed = _run(fresh, new, 20, METRICS[10:])
    tsched = T.ReduceLROnPlateau(theirs, **kw)
    assert resumed == _run(theirs, tsched, 30, METRICS)[10:]


@pytest.mark.parametrize(
    "make",
    [
        lambda m, o: m.StepLR(o, step_size=3, gamma=0.5),
        lambda m, o: m.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.5),
        lambda m, o: m.ExponentialLR(o, gamma=0.9),
        lambda m, o: m.CosineAnnealingLR(o, T_max=6, eta_min=0.01),
        lambda m, o: m.LinearLR(o, start_factor=0.25, total_iters=4),
        lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=4),
        lambda m, o: m.PolynomialLR(o, total_iters=8, power=1.5),
    ],
)
def test_closed_form_with_epoch_argument(make: Any) -> None:
    ours, theirs = _opts()
    sched, tsched = make(S, ours), make(T, theirs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in (3, 7, 1, 10):
            ours.step()
            theirs.step()
            sched.step(epoch)
            tsched.step(epoch)
            assert sched.get_last_lr() == tsched.get_last_lr()


def test_state_dict_contents_and_initial_lr() -> None:
    ours, theirs = _opts()
    sched, tsched = S.StepLR(ours, step_size=3), T.StepLR(theirs, step_size=3)
    sd, tsd = sched.state_dict(), tsched.state_dict()
    assert set(sd) == set(tsd)
    assert sd["base_lrs"] == tsd["base_lrs"] == [0.1, 0.5]
    assert S.LRScheduler is S._LRScheduler


def test_errors_match_torch() -> None:
    ours, _ = _opts()
    cases = [
        (lambda m, o: m.LinearLR(o, start_factor=0.0), ValueError),
        (lambda m, o: m.LinearLR(o, end_factor=1.5), ValueError),
        (lambda m, o: m.OneCycleLR(o, max_lr=1.0), ValueError),
        (lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=0), ValueError),
        (lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=2.0), ValueError),
        (lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="x"), ValueError),
        (lambda m, o: m.OneCycleLR(o, max_lr=[1.0], total_steps=5), ValueError),
        (lambda m, o: m.ReduceLROnPlateau(o, factor=1.0), ValueError),
        (lambda m, o: m.ReduceLROnPlateau(o, mode="avg"), ValueError),
        (lambda m, o: m.ReduceLROnPlateau(o, threshold_mode="x"), ValueError),
        (lambda m, o: m.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError),
        (lambda m, o: m.LambdaLR(o, [LAMBDA]), ValueError),
        (lambda m, o: m.MultiplicativeLR(o, [LAMBDA]), ValueError),
        (lambda m, o: m.MultiplicativeLR(o, 0.5), TypeError),
        (lambda m, o: m.ConstantLR(o, factor=1.5), ValueError),
        (lambda m, o: m.ConstantLR(o, factor=-0.1), ValueError),
        (lambda m, o: m.StepLR(o, step_size=2, last_epoch=3), KeyError),
        (lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2)], milestones=[3]), ValueError),
        (lambda m, o: m.SequentialLR(o, [m.ReduceLROnPlateau(o)], milestones=[]), ValueError),
    ]
    for make, exc in cases:
        fresh, tfresh = _opts()
        with pytest.raises(exc) as e1:
            make(S, fresh)
        with pytest.raises(exc) as e2:
            make(T, tfresh)
        if exc is not KeyError:
            assert str(e1.value) == str(e2.value)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        S.StepLR(object(), step_size=2)  # type: ignore[arg-type]
    sched = S.OneCycleLR(ours, max_lr=1.0, total_steps=3)
    for _ in range(3):
        ours.step()
        sched.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        sched.step()


def test_warns_when_scheduler_steps_before_optimizer() -> None:
    ours, _ = _opts()
    sched = S.StepLR(ours, step_size=2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


# fractional epochs as SGDR's docs use them (epoch + i / iters), jumps back and forth, restarts
CAWR_EPOCHS = [0.0, 0.25, 0.5, 2.75, 3.0, 2.999, 8.9, 9.0, 21.0, 20.5, 5.0, 44.0, 1.0, 100.125]


@pytest.mark.parametrize(
    "kw", [dict(T_0=3), dict(T_0=3, T_mult=2, eta_min=0.05), dict(T_0=1, T_mult=3)]
)
def test_cosine_warm_restarts_fractional_epochs_match_torch(kw: dict[str, Any]) -> None:
    ours, theirs = _opts()
    sched = S.CosineAnnealingWarmRestarts(ours, **kw)
    tsched = T.CosineAnnealingWarmRestarts(theirs, **kw)
    for epoch in CAWR_EPOCHS:
        ours.step()
        theirs.step()
        sched.step(epoch)
        tsched.step(epoch)
        assert sched.get_last_lr() == tsched.get_last_lr(), epoch
        assert (sched.T_cur, sched.T_i, sched.last_epoch) == (
            tsched.T_cur,
            tsched.T_i,
            tsched.last_epoch,
        )
        sched.step()  # and a plain step from there
        tsched.step()
        assert sched.get_last_lr() == tsched.get_last_lr(), epoch
    assert sched.state_dict() == tsched.state_dict()


@pytest.mark.parametrize(
    "kw,msg",
    [
        (dict(T_0=0), "Expected positive integer T_0, but got 0"),
        (dict(T_0=2.0), "Expected positive integer T_0, but got 2.0"),
        (dict(T_0=2, T_mult=0), "Expected integer T_mult >= 1, but got 0"),
        (dict(T_0=2, T_mult=1.5), "Expected integer T_mult >= 1, but got 1.5"),
        (
            dict(T_0=2, eta_min="0"),
            "Expected float or int eta_min, but got 0 of type <class 'str'>",
        ),
    ],
)
def test_cosine_warm_restarts_errors_match_torch(kw: dict[str, Any], msg: str) -> None:
    ours, theirs = _opts()
    with pytest.raises(ValueError) as err:
        S.CosineAnnealingWarmRestarts(ours, **kw)
    with pytest.raises(ValueError) as terr:
        T.CosineAnnealingWarmRestarts(theirs, **kw)
    assert str(err.value) == str(terr.value) == msg
    sched = S.CosineAnnealingWarmRestarts(ours, T_0=2)
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        sched.step(-1)

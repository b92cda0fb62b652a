"""A tiny stand-in for gym's CartPole for the reinforcement-learning programs (no gym, no downloads).

The same interface as gymnasium's: ``reset(seed=None) -> (state, info)``,
``step(action) -> (state, reward, terminated, truncated, info)``, ``spec.reward_threshold``.
The state is 4 equal numbers, all +1 or all -1 at random; action 1 is right when they are +1,
0 otherwise. A right action earns 1, a wrong one 0; the third wrong action ends the episode (so
that, as in CartPole, how long an episode lasts depends on the actions), 20 steps at most. A policy
that has learned the rule earns 20 per episode, a random one about 3.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np


class SignEnv:
    max_steps = 20

    def __init__(self, reward_threshold: float = 15.0) -> None:
        self.spec = SimpleNamespace(reward_threshold=reward_threshold)
        self._rng = np.random.default_rng(0)
        self._state = np.zeros(4)
        self._t = 0
        self._lives = 3

    def reset(self, seed: int | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._t = 0
        self._lives = 3
        self._state = self._rng.choice([-1.0, 1.0]) * np.ones(4)
        return self._state.copy(), {}

    def step(self, action: int):
        right = int(action) == int(self._state[0] > 0)
        self._t += 1
        self._lives -= 0 if right else 1
        self._state = self._rng.choice([-1.0, 1.0]) * np.ones(4)
        return self._state.copy(), 1.0 if right else 0.0, self._lives == 0, self._t >= self.max_steps, {}

    def render(self) -> None:
        pass

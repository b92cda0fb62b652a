"""Hyperparameter sweeps (``agrad sweep``) on Optuna: the search space (``space``), the study
in the sweep folder's SQLite file (``study``), the trials as run folders (``runner``), and the
table, ``best.yaml`` and plots at the end (``report``, ``plot``). Optuna is imported lazily."""

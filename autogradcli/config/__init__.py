"""The YAML experiment spec: loading with source positions, validation, building.

``load_config(path, overrides=()) -> Config`` reads and validates a config (the schema is in
``autogradcli.config.schema``'s docstring); ``build_experiment(config) -> Experiment`` turns it
into a model, loss, optimizer, scheduler, data loaders and hook specs for the trainer. Every
problem becomes one ``ConfigError`` whose issues read ``file:line:col  key.path: message``.

Layout: ``source`` (YAML with positions), ``loader`` (``Config``, ``--set``), ``schema`` (the
documented keys, defaults and checks), ``validator`` + ``validate_{data,model,training,hooks}``
(one module per section, ``checks`` and ``issues`` shared), ``build`` +
``build_{data,model,training}`` (``builder`` shared, ``experiment`` the result types),
``registry`` (names a config may use), ``imports`` (user code), ``blocks`` (merge blocks, Graph).
"""

from .build import Experiment, HookSpec, TrainSettings, build_experiment
from .errors import ConfigError, ConfigIssue, did_you_mean, format_path
from .loader import Config, apply_override, load_config, load_config_text
from .source import SourceMap, load_yaml, load_yaml_text

__all__ = [
    "Config",
    "ConfigError",
    "ConfigIssue",
    "Experiment",
    "HookSpec",
    "SourceMap",
    "TrainSettings",
    "apply_override",
    "build_experiment",
    "did_you_mean",
    "format_path",
    "load_config",
    "load_config_text",
    "load_yaml",
    "load_yaml_text",
]

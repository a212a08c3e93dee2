"""config.yaml: its sections, the loader, the cache of its parsed data, edits, the snapshot.

One module per concern: :mod:`~memoryd.config.sections` (the frozen dataclasses),
:mod:`~memoryd.config.loader` (YAML to a checked Config), :mod:`~memoryd.config.cache`
(the parsed data kept, so a command need not import PyYAML), :mod:`~memoryd.config.edit`
(add or remove a root in the user's file) and :mod:`~memoryd.config.snapshot` (the roots
and search settings the lean ``memoryd recall`` reads).

This file imports nothing: the lean recall imports :mod:`memoryd.config.snapshot`, which
loads this package first, and must load no more than the snapshot itself needs.
"""

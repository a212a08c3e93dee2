"""The daemon's thread classes keep clear of the names CPython's ``Thread`` uses itself.

A subclass's method that shares a name with one of ``Thread``'s own attributes is
overwritten on the instance when ``Thread.__init__`` assigns it: Python 3.13 gives every
thread a ``_handle`` (its ``_ThreadHandle``), and the batch worker's method of that name
became "'_thread._ThreadHandle' object is not callable" on the first change, so the daemon
indexed nothing. The names are every private attribute of ``Thread`` (class and instance)
in the Pythons memoryd supports, so a clash fails here whichever Python runs the tests.
"""

from __future__ import annotations

import threading

import pytest

from memoryd.daemon.batch_worker import Worker
from memoryd.daemon.compiling import Compiler

# sorted(n for n in vars(threading.Thread()) | vars(threading.Thread) if n.startswith("_")),
# without dunders, on CPython 3.11.7, 3.12.1 and 3.13.0 (union).
THREAD_NAMES = frozenset({
    "_after_fork", "_args", "_bootstrap", "_bootstrap_inner", "_daemonic", "_delete", "_handle",
    "_ident", "_initialized", "_invoke_excepthook", "_is_stopped", "_kwargs", "_name",
    "_native_id", "_reset_internal_locks", "_set_ident", "_set_native_id", "_set_tstate_lock",
    "_started", "_stderr", "_stop", "_target", "_tstate_lock", "_wait_for_tstate_lock",
})


def _own_names(cls: type) -> set[str]:
    """Names ``cls`` and its memoryd bases define (not ``threading.Thread``'s)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("memoryd."):
            names.update(vars(klass))
    return names


def test_the_list_holds_what_this_python_thread_uses() -> None:
    here = set(vars(threading.Thread())) | set(vars(threading.Thread))
    private = {n for n in here if n.startswith("_") and not n.startswith("__")}
    assert private <= THREAD_NAMES


@pytest.mark.parametrize("cls", [Worker, Compiler], ids=lambda c: c.__name__)
def test_a_daemon_thread_class_defines_no_name_thread_uses(cls: type) -> None:
    assert issubclass(cls, threading.Thread)
    assert sorted(_own_names(cls) & THREAD_NAMES) == []

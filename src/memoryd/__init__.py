"""memoryd: git-native sync daemon and file watcher for AI agents' long-term memory."""

__version__ = "0.1.0"

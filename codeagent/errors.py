"""Exceptions shared across codeagent. Each carries a one-line message fit for the terminal."""


class CodeagentError(Exception):
    """Base class: an error the CLI prints as one line, without a traceback."""


class ModelError(CodeagentError):
    """The model could not be found, fetched, read or converted."""


class InputError(CodeagentError):
    """Bad input from the user: empty prompt, missing file, context past the model limit..."""


class BudgetError(CodeagentError):
    """The cache cannot be brought within its budget (e.g. pinned entries alone exceed it)."""

"""haven: the Python SDK of haven's sandbox service (`haven serve`).

    from haven import Sandbox, run_code_blocks
    with Sandbox(policy="offline") as sb:
        r = sb.run(["python3", "-c", "print(6*7)"])
    results = run_code_blocks(model_answer, policy="offline")

Standard library only; the service is started when it is not running."""

from .client import Client, default_socket_path, start_service
from .codeblocks import BlockResult, CodeBlock, format_results, parse_code_blocks, run_code_blocks
from .errors import (
    BadRequest,
    Busy,
    ConnectionLost,
    Forbidden,
    HavenError,
    InternalError,
    LimitError,
    MethodNotAllowed,
    NotFound,
    PolicyError,
    ProtocolError,
    ServiceStartError,
    TooLarge,
    Unavailable,
    UnsupportedLanguage,
)
from .sandbox import FileEntry, FileList, Files, RunResult, RunStream, Sandbox

__version__ = "0.1.0"

__all__ = [
    "BadRequest",
    "BlockResult",
    "Busy",
    "Client",
    "CodeBlock",
    "ConnectionLost",
    "FileEntry",
    "FileList",
    "Files",
    "Forbidden",
    "HavenError",
    "InternalError",
    "LimitError",
    "MethodNotAllowed",
    "NotFound",
    "PolicyError",
    "ProtocolError",
    "RunResult",
    "RunStream",
    "Sandbox",
    "ServiceStartError",
    "TooLarge",
    "Unavailable",
    "UnsupportedLanguage",
    "default_socket_path",
    "format_results",
    "parse_code_blocks",
    "run_code_blocks",
    "start_service",
]

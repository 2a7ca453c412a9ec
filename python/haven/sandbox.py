"""A sandbox of the service, held over one connection of its own: created
with destroy_on_disconnect, so a process that dies without closing it
leaves nothing behind."""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from .client import Client, LineStream
from .errors import ConnectionLost, HavenError, NotFound, ProtocolError, UnsupportedLanguage, error_from_response

_T = TypeVar("_T")

# The languages run_code() knows: the interpreter's argv and the file's
# extension.  Names are the canonical ones; LANGUAGE_ALIASES maps what
# people write (a fence's info string, "py", "js") onto them.
INTERPRETERS: Dict[str, Tuple[Tuple[str, ...], str]] = {
    "python": (("python3",), ".py"),
    "bash": (("bash",), ".sh"),
    "sh": (("sh",), ".sh"),
    "node": (("node",), ".js"),
}
LANGUAGE_ALIASES: Dict[str, str] = {
    "python": "python",
    "python3": "python",
    "py": "python",
    "bash": "bash",
    "shell": "bash",
    "sh": "sh",
    "node": "node",
    "nodejs": "node",
    "js": "node",
    "javascript": "node",
}


def canonical_language(language: str) -> Optional[str]:
    """"py" -> "python", "js" -> "node"...; None for a language run_code cannot run."""
    return LANGUAGE_ALIASES.get(language.strip().lower())


def _b64_or_text(doc: Mapping[str, Any], key: str, what: str) -> Tuple[str, bytes]:
    text = doc.get(key, "")
    if not isinstance(text, str):
        raise ProtocolError("%s: %r is not a string" % (what, key), code="protocol")
    raw = doc.get(key + "_b64")
    if raw is None:
        return text, text.encode("utf-8")
    if not isinstance(raw, str):
        raise ProtocolError("%s: %r is not a string" % (what, key + "_b64"), code="protocol")
    try:
        return text, base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ProtocolError("%s: %r is not base64: %s" % (what, key + "_b64", e), code="protocol") from e


def _flag(doc: Mapping[str, Any], key: str, what: str) -> bool:
    value = doc.get(key, False)
    if not isinstance(value, bool):
        raise ProtocolError("%s: %r is not a boolean" % (what, key), code="protocol")
    return value


@dataclass(frozen=True)
class RunResult:
    """What a command gave.  stdout/stderr are text (bytes that are not
    UTF-8 shown as U+FFFD); stdout_bytes/stderr_bytes are the exact bytes.
    exit_code is a shell's: 128+N for signal N, 124 when the time limit
    ended it (timed_out).  *_truncated: it wrote more than max_output and
    the rest was dropped."""

    exit_code: int
    stdout: str
    stderr: str
    stdout_bytes: bytes
    stderr_bytes: bytes
    duration: float
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "RunResult":
        what = "run result"
        code = doc.get("exit_code")
        if not isinstance(code, int) or isinstance(code, bool):
            raise ProtocolError("%s: no integer \"exit_code\"" % what, code="protocol")
        duration = doc.get("duration_s", 0.0)
        if not isinstance(duration, (int, float)) or isinstance(duration, bool):
            raise ProtocolError("%s: \"duration_s\" is not a number" % what, code="protocol")
        out, out_b = _b64_or_text(doc, "stdout", what)
        err, err_b = _b64_or_text(doc, "stderr", what)
        return cls(
            exit_code=code,
            stdout=out,
            stderr=err,
            stdout_bytes=out_b,
            stderr_bytes=err_b,
            duration=float(duration),
            timed_out=_flag(doc, "timed_out", what),
            stdout_truncated=_flag(doc, "stdout_truncated", what),
            stderr_truncated=_flag(doc, "stderr_truncated", what),
        )


@dataclass(frozen=True)
class FileEntry:
    name: str
    type: str  # "file", "dir", "link" or "other"
    size: int


class FileList(List[FileEntry]):
    """The entries of a directory; truncated: the service listed only the first ones."""

    truncated: bool = False


def _policy_arg(policy: str) -> str:
    """A policy file's path made absolute (the service resolves a relative
    one from its own directory, not the caller's); a name as it is.  A path
    is what haven's loader takes for one: a "/", a leading ".", ".yaml"."""
    if "/" in policy or policy.startswith(".") or ".yaml" in policy:
        return os.path.abspath(policy)
    return policy


def _run_request(
    argv: Sequence[str],
    stdin: Union[bytes, str, None],
    env: Optional[Mapping[str, str]],
    cwd: Optional[str],
    timeout: Optional[float],
    max_output: Optional[int],
) -> Dict[str, Any]:
    if isinstance(argv, (str, bytes)):
        raise TypeError("argv is a list of strings, e.g. [\"sh\", \"-c\", command]")
    req: Dict[str, Any] = {"argv": [str(a) for a in argv]}
    if not req["argv"]:
        raise ValueError("argv is empty")
    if env:
        req["env"] = {str(k): str(v) for k, v in env.items()}
    if cwd is not None:
        req["cwd"] = cwd
    if isinstance(stdin, str):
        req["stdin"] = stdin
    elif stdin is not None:
        req["stdin_b64"] = base64.b64encode(bytes(stdin)).decode("ascii")
    if timeout is not None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        # The API counts whole seconds: round up, never shorten the limit to 0.
        req["timeout_s"] = int(math.ceil(timeout))
    if max_output is not None:
        if max_output <= 0:
            raise ValueError("max_output must be positive")
        req["max_output"] = int(max_output)
    return req


class RunStream:
    """A run whose output comes as it is written: iterate for (stream,
    data) pairs ("stdout" or "stderr", bytes); after the loop, .result is
    the RunResult (its stdout/stderr hold the output too, up to max_output).
    close() (or leaving a with block) waits for the run's end."""

    def __init__(self, lines: LineStream) -> None:
        self._lines = lines
        self.result: Optional[RunResult] = None

    def __iter__(self) -> Iterator[Tuple[str, bytes]]:
        for doc in self._lines:
            if "error" in doc:
                raise error_from_response(0, json.dumps(doc).encode("utf-8"))
            if "exit_code" in doc:
                self.result = RunResult.from_json(doc)
                continue
            stream = doc.get("stream")
            if stream not in ("stdout", "stderr"):
                raise ProtocolError("streamed run: a line with no \"stream\" nor \"exit_code\"", code="protocol")
            _, data = _b64_or_text(doc, "data", "streamed run")
            yield stream, data
        if self.result is None:
            raise ProtocolError("streamed run: the stream ended without a result", code="protocol")

    @property
    def done(self) -> bool:
        """The whole answer was read."""
        return self._lines.done

    def wait(self) -> RunResult:
        """Read the rest and return the result."""
        for _ in self:
            pass
        assert self.result is not None
        return self.result

    def close(self) -> None:
        self._lines.close()

    def __enter__(self) -> "RunStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Files:
    """The sandbox's workspace: paths are relative to it."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sb = sandbox

    def write(self, path: str, data: Union[bytes, str]) -> int:
        """Write a file (text is written as UTF-8); returns its size."""
        doc = self._sb._call(lambda c: c.put_file(self._sb.id, path, data))
        size = doc.get("size")
        return size if isinstance(size, int) else len(data)

    def read(self, path: str) -> bytes:
        return self._sb._call(lambda c: c.get_file(self._sb.id, path))

    def list(self, path: str = "") -> FileList:
        doc = self._sb._call(lambda c: c.list_files(self._sb.id, path))
        entries = doc.get("entries")
        if not isinstance(entries, list):
            raise ProtocolError("list: no \"entries\" list", code="protocol")
        out = FileList()
        for e in entries:
            if not isinstance(e, dict) or not isinstance(e.get("name"), str):
                raise ProtocolError("list: an entry without a name", code="protocol")
            size = e.get("size", 0)
            out.append(FileEntry(e["name"], str(e.get("type", "other")), size if isinstance(size, int) else 0))
        out.truncated = bool(doc.get("truncated", False))
        return out


class Sandbox:
    """A sandbox made by the service from a policy (a name like "offline"
    or a policy file's path), exactly as `haven run` makes it.

    project: a project directory (None: a scratch workspace).
    pool: a scratch sandbox may be taken from the service's warm pool.
    idle_timeout: seconds without a request before the service destroys it.
    socket: the service's socket (default: $HAVEN_SOCKET, else the user's).

    The sandbox lives as long as this object's connection: close() (or the
    end of a with block) destroys it, and so does the process's end."""

    def __init__(
        self,
        policy: str = "offline",
        project: Optional[str] = None,
        pool: bool = True,
        idle_timeout: Optional[int] = None,
        socket: Optional[str] = None,
        *,
        autostart: bool = True,
    ) -> None:
        self._client = Client(socket, autostart=autostart)
        self._stream: Optional[RunStream] = None
        self._closed = False
        self._code_seq = 0
        try:
            info = self._client.create_sandbox(
                _policy_arg(policy),
                project=os.path.abspath(project) if project is not None else None,
                pool=pool,
                destroy_on_disconnect=True,
                idle_timeout=idle_timeout,
            )
        except BaseException:
            self._client.close()
            raise
        sid = info.get("id")
        if not isinstance(sid, str) or not sid:
            self._client.close()
            raise ProtocolError("create: the answer has no id", code="protocol")
        self.info: Dict[str, Any] = info
        self.id: str = sid
        self.policy: str = str(info.get("policy", policy))
        self.workspace: Optional[str] = info.get("workspace") if isinstance(info.get("workspace"), str) else None
        self.pooled: bool = bool(info.get("pooled", False))
        self.files = Files(self)

    # -- plumbing -----------------------------------------------------------

    def _call(self, fn: Callable[[Client], _T]) -> _T:
        if self._closed:
            raise HavenError("sandbox %s is closed" % self.id, code="closed")
        if self._stream is not None:
            # A stream left unread holds the connection: finish it first.
            stream, self._stream = self._stream, None
            stream.close()
        return fn(self._client)

    # -- commands -----------------------------------------------------------

    def run(
        self,
        argv: Sequence[str],
        stdin: Union[bytes, str, None] = None,
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        timeout: Optional[float] = None,
        max_output: Optional[int] = None,
    ) -> RunResult:
        """Run argv in the sandbox and wait for its end.  timeout: seconds
        (whole, rounded up; default the service's); max_output: bytes kept
        per stream (default the service's)."""
        req = _run_request(argv, stdin, env, cwd, timeout, max_output)
        return RunResult.from_json(self._call(lambda c: c.run(self.id, req)))

    def stream(
        self,
        argv: Sequence[str],
        stdin: Union[bytes, str, None] = None,
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        timeout: Optional[float] = None,
        max_output: Optional[int] = None,
    ) -> RunStream:
        """As run(), the output as it comes: see RunStream."""
        req = _run_request(argv, stdin, env, cwd, timeout, max_output)
        stream = RunStream(self._call(lambda c: c.run_stream(self.id, req)))
        self._stream = stream
        return stream

    def run_code(
        self,
        code: str,
        language: str = "python",
        stdin: Union[bytes, str, None] = None,
        env: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
        max_output: Optional[int] = None,
    ) -> RunResult:
        """Write code to .haven-code-N.EXT in the workspace and run it with
        its interpreter (python: python3; bash; sh; node/js: node), in the
        workspace.  UnsupportedLanguage for any other language."""
        return self.run(self.code_argv(code, language), stdin=stdin, env=env, timeout=timeout, max_output=max_output)

    def code_argv(self, code: str, language: str) -> List[str]:
        """Write code into the workspace; the argv that runs it."""
        lang = canonical_language(language)
        if lang is None:
            raise UnsupportedLanguage(
                "no interpreter for %r (known: %s)" % (language, ", ".join(sorted(LANGUAGE_ALIASES)))
            )
        interp, ext = INTERPRETERS[lang]
        self._code_seq += 1
        name = ".haven-code-%d%s" % (self._code_seq, ext)
        self.files.write(name, code)
        return list(interp) + [name]

    # -- lifetime -----------------------------------------------------------

    def describe(self) -> Dict[str, Any]:
        """The service's record of this sandbox (idle time, runs...)."""
        return self._call(lambda c: c.get_sandbox(self.id))

    def close(self) -> Optional[Dict[str, Any]]:
        """Destroy the sandbox and close its connection (twice is harmless).
        Returns the service's answer to the destroy ({"notes": [...]}), None
        when it had already ended."""
        if self._closed:
            return None
        self._closed = True
        answer = None
        try:
            if self._stream is None or self._stream.done:
                answer = self._client.delete_sandbox(self.id)
            # else: a run still streams; closing the connection ends it and
            # destroys the sandbox (destroy_on_disconnect) without waiting.
        except (NotFound, ConnectionLost):
            pass
        finally:
            self._stream = None
            self._client.close()
        return answer

    destroy = close

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "Sandbox(id=%r, policy=%r, pooled=%r%s)" % (
            self.id,
            self.policy,
            self.pooled,
            ", closed" if self._closed else "",
        )

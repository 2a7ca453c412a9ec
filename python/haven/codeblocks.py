"""The proxy between a model and the sandbox: take the fenced code blocks
out of a model's answer (Markdown), run them in order in one sandbox, and
hand back what each gave, as text the model can read."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Collection, Dict, List, Optional, Tuple

from .sandbox import RunResult, Sandbox, canonical_language

# An opening fence: any indentation (fences inside list items are indented
# past CommonMark's three spaces in real answers), three or more backticks
# or tildes, then the info string.
_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")

# Blocks that show a terminal session: the commands are the lines after a
# "$ " prompt, the rest is output the model expects.
_SESSION_LANGUAGES = {"console", "shell-session", "shellsession", "terminal"}

# A cheap command per interpreter that proves it exists and may execute in
# the sandbox (the policy decides which programs run, not this list).
_PROBES: Dict[str, List[str]] = {
    "python": ["python3", "-c", "pass"],
    "bash": ["bash", "-c", ":"],
    "sh": ["sh", "-c", ":"],
    "node": ["node", "-e", "0"],
}


@dataclass(frozen=True)
class CodeBlock:
    index: int  # 0-based, in the answer's order
    language: str  # the info string's first word, lower case ("" when none)
    info: str  # the whole info string
    code: str
    line: int  # 1-based line of the opening fence
    terminated: bool = True  # False: the answer ended inside the block


@dataclass(frozen=True)
class BlockResult:
    """A block and what it gave: result, or skipped (the reason)."""

    index: int
    language: str
    code: str
    result: Optional[RunResult] = None
    skipped: Optional[str] = None

    @property
    def ran(self) -> bool:
        return self.result is not None


def _language_of(info: str) -> str:
    # "python title=x.py", "{.python .numberLines}", "{python}", "py,ignore"
    word = info.strip().lstrip("{").lstrip(".")
    word = re.split(r"[\s,{}]", word, maxsplit=1)[0] if word else ""
    return word.lower()


def parse_code_blocks(text: str) -> List[CodeBlock]:
    """The fenced code blocks of a Markdown text, in order.  A fence closes
    on a line of the same character, at least as long, and nothing else; a
    block the text ends inside (an answer cut short) is kept, marked
    terminated=False.  Each content line loses up to the opening fence's
    indentation."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the text's final newline ends its last line, it is no line of its own
    blocks: List[CodeBlock] = []
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i].rstrip("\r"))
        if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).strip()
        close = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
        start = i
        body: List[str] = []
        i += 1
        terminated = False
        while i < len(lines):
            line = lines[i].rstrip("\r")
            i += 1
            if close.match(line):
                terminated = True
                break
            strip = 0
            while strip < indent and strip < len(line) and line[strip] in " \t":
                strip += 1
            body.append(line[strip:])
        code = "\n".join(body)
        if body:
            code += "\n"
        blocks.append(CodeBlock(len(blocks), _language_of(info), info, code, start + 1, terminated))
    return blocks


def _session_commands(code: str) -> str:
    """The commands of a terminal session: the "$ " lines, with the lines a
    trailing backslash continues."""
    out: List[str] = []
    continued = False
    for line in code.split("\n"):
        stripped = line.lstrip()
        if continued:
            out.append(line)
        elif stripped.startswith("$ ") or stripped == "$":
            out.append(stripped[2:])
        else:
            continue
        continued = line.rstrip().endswith("\\")
    return "\n".join(out) + ("\n" if out else "")


def _all_prompted(code: str) -> bool:
    lines = [l.lstrip() for l in code.split("\n") if l.strip()]
    return bool(lines) and all(l.startswith("$ ") for l in lines)


def _plan(block: CodeBlock, allowed: Optional[Collection[str]]) -> Tuple[Optional[str], str, Optional[str]]:
    """(language to run, code to run, reason to skip)."""
    if not block.language:
        return None, block.code, "no language given on the fence"
    code = block.code
    if block.language in _SESSION_LANGUAGES:
        lang: Optional[str] = "bash"
        code = _session_commands(code)
        if not code.strip():
            return None, code, "a %s block with no \"$ \" command lines" % block.language
    else:
        lang = canonical_language(block.language)
        if lang is None:
            return None, code, "%r is not a language the sandbox runs (python, bash, sh, node)" % block.language
        if lang in ("bash", "sh") and _all_prompted(code):
            code = _session_commands(code)
    if not code.strip():
        return None, code, "the block is empty"
    if allowed is not None and lang not in allowed and block.language not in allowed:
        return None, code, "%s blocks are not run here (allowed: %s)" % (lang, ", ".join(sorted(allowed)))
    return lang, code, None


def _probe(sb: Sandbox, lang: str, timeout: Optional[float]) -> Optional[str]:
    """None when the language's interpreter runs in the sandbox, else why not."""
    argv = _PROBES[lang]
    r = sb.run(argv, timeout=timeout if timeout is not None else 30)
    if r.exit_code == 0:
        return None
    why = (r.stderr.strip().splitlines() or [""])[-1]
    if r.exit_code in (126, 127):
        return "%s cannot be run in this sandbox (exit %d%s)" % (argv[0], r.exit_code, ": " + why if why else "")
    return "%s does not work in this sandbox (%s exited %d%s)" % (
        argv[0],
        " ".join(argv),
        r.exit_code,
        ": " + why if why else "",
    )


def run_code_blocks(
    answer: str,
    policy: str = "offline",
    sandbox: Optional[Sandbox] = None,
    *,
    languages: Optional[Collection[str]] = None,
    timeout: Optional[float] = None,
    max_output: Optional[int] = None,
    stop_on_error: bool = False,
    socket: Optional[str] = None,
) -> List[BlockResult]:
    """Run the fenced code blocks of a model's answer in order, all in ONE
    sandbox (so a block sees the files an earlier one wrote), and return
    each block's result or why it was skipped.

    sandbox: run in this sandbox (left open); else a fresh one of `policy`
    is made and destroyed at the end (none when no block can run).
    languages: run only these (canonical names: python, bash, sh, node).
    timeout, max_output: per block, as Sandbox.run.
    stop_on_error: skip the blocks after one that failed.

    Whether a language runs is asked of the sandbox: its interpreter is
    started once (python3 -c pass, node -e 0...), and a language whose
    interpreter is missing or may not execute there is skipped with the
    reason, never guessed."""
    blocks = parse_code_blocks(answer)
    plans = [_plan(b, languages) for b in blocks]
    results: List[BlockResult] = []
    if all(lang is None for lang, _, _ in plans):
        return [BlockResult(b.index, b.language, b.code, skipped=why) for b, (_, _, why) in zip(blocks, plans)]

    sb = sandbox if sandbox is not None else Sandbox(policy=policy, socket=socket)
    try:
        probed: Dict[str, Optional[str]] = {}
        failed_at: Optional[int] = None
        for b, (lang, code, why) in zip(blocks, plans):
            if lang is None:
                results.append(BlockResult(b.index, b.language, b.code, skipped=why))
                continue
            if failed_at is not None:
                results.append(
                    BlockResult(b.index, b.language, b.code, skipped="block %d failed before it" % (failed_at + 1))
                )
                continue
            if lang not in probed:
                probed[lang] = _probe(sb, lang, timeout)
            if probed[lang] is not None:
                results.append(BlockResult(b.index, b.language, b.code, skipped=probed[lang]))
                continue
            r = sb.run_code(code, language=lang, timeout=timeout, max_output=max_output)
            results.append(BlockResult(b.index, b.language, b.code, result=r))
            if stop_on_error and not r.ok:
                failed_at = b.index
    finally:
        if sandbox is None:
            sb.close()
    return results


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + "\n[... %d more characters not shown]" % (len(text) - limit)


def format_results(results: List[BlockResult], max_chars: int = 4000) -> str:
    """The results as plain text for the model: per block its status, then
    its stdout and stderr (each cut at max_chars characters)."""
    parts: List[str] = []
    for br in results:
        head = "[block %d: %s]" % (br.index + 1, br.language or "no language")
        if br.result is None:
            parts.append("%s skipped: %s" % (head, br.skipped))
            continue
        r = br.result
        status = "timed out (exit %d)" % r.exit_code if r.timed_out else "exit %d" % r.exit_code
        lines = ["%s %s, %.2f s" % (head, status, r.duration)]
        if not (r.stdout or r.stderr or r.stdout_truncated or r.stderr_truncated):
            lines.append("(no output)")
        for name, text, cut in (("stdout", r.stdout, r.stdout_truncated), ("stderr", r.stderr, r.stderr_truncated)):
            if not text and not cut:
                continue
            lines.append("%s:" % name)
            lines.append(_clip(text.rstrip("\n"), max_chars))
            if cut:
                lines.append("[%s truncated by the sandbox's output limit]" % name)
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + ("\n" if parts else "")

"""Reading elements back out of an observation's text.

The twin of ``parseElements`` in ``engine/observe/parse_observation.ts``: what a client
that holds only the text (a chat transcript, a tool result) uses to find an id by role
and name. Lines read ``[3] button Save``, ``[4] Docs → /docs`` (a link: the arrow says
so) and ``[5] checkbox "Remember me" checked`` (the name quoted when more follows it).
"""

import re
from typing import List, Optional, TypedDict

__all__ = ["TextElement", "parse_elements", "find_id"]


class TextElement(TypedDict, total=False):
    """One element as its text shows it."""

    id: int
    role: str
    """The role word (``"link"`` for a line with a ``→`` target, ``""`` when none)."""
    name: str
    """The name, quotes taken off (``""`` when the element has none)."""
    href: str
    """A link's target as shown after ``→``, when shown."""
    line: str
    """The whole line the element is on, indentation taken off."""


_ID = re.compile(r"\[(\d+)\] ?")
_NAME_END = re.compile(r" · | \| ")
_ARROW = re.compile(r'^((?:(?!\[\d+\])[^"])*?) → (\S+)')
_ROLE = re.compile(r"^([a-z]+)(?=[ :]|$)")
_TARGET = re.compile(r"^ → (\S+)")


def _quoted(text: str) -> "tuple[str, str]":
    end = text.find('"', 1)
    if end < 0:
        return text[1:], ""
    return text[1:end], text[end + 1:]


def _read(rest: str) -> TextElement:
    if rest.startswith('"'):
        name, after = _quoted(rest)
        target = _TARGET.match(after)
        return {"role": "link", "name": name, "href": target.group(1)} if target else {"role": "", "name": name}
    if rest.startswith("→ "):
        return {"role": "link", "name": "", "href": rest[2:].split(" ")[0]}
    arrow = _ARROW.match(rest)
    if arrow and not _NAME_END.search(arrow.group(1)):
        return {"role": "link", "name": arrow.group(1), "href": arrow.group(2)}
    found = _ROLE.match(rest)
    role = found.group(1) if found else ""
    after = rest[len(role):]
    if not after.startswith(" ") or after.startswith(" ["):
        return {"role": role, "name": ""}
    body = after[1:]
    if body.startswith('"'):
        return {"role": role, "name": _quoted(body)[0]}
    return {"role": role, "name": _NAME_END.split(body)[0]}


def parse_elements(text: str) -> List[TextElement]:
    """Every element with an id in an observation's text, in the order shown.

    >>> [(e["id"], e["role"], e["name"]) for e in parse_elements("[3] button Save · [4] Docs → /docs")]
    [(3, 'button', 'Save'), (4, 'link', 'Docs')]
    """
    out: List[TextElement] = []
    for raw in text.split("\n"):
        line = raw.lstrip()
        for match in _ID.finditer(line):
            element: TextElement = {"id": int(match.group(1))}
            element.update(_read(line[match.end():]))
            element["line"] = line
            out.append(element)
    return out


def find_id(text: str, role: str, name: str) -> Optional[int]:
    """The id of the first element of ``text`` with this role and name, or ``None``.

    >>> find_id('[7] textbox "New note" focused', "textbox", "New note")
    7
    """
    for element in parse_elements(text):
        if element.get("role") == role and element.get("name") == name:
            return element["id"]
    return None

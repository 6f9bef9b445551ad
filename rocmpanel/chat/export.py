"""A saved conversation as a file: Markdown to read, JSON to process (figures included)."""

from __future__ import annotations

import json

from rocmpanel.chat.store import Conversation


def export_json(conversation: Conversation) -> str:
    data = {
        "title": conversation.title,
        "model": conversation.model,
        "system_prompt": conversation.system_prompt,
        "created": conversation.created,
        "messages": [
            {
                "role": m.role,
                "content": m.content,
                **({"figures": m.figures.as_dict()} if m.figures else {}),
            }
            for m in conversation.messages
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def export_markdown(conversation: Conversation) -> str:
    lines = [f"# {conversation.title}", ""]
    if conversation.model:
        lines += [f"Model: `{conversation.model}`", ""]
    if conversation.system_prompt:
        lines += ["**System:** " + conversation.system_prompt, ""]
    for message in conversation.messages:
        lines += [f"## {message.role.capitalize()}", "", message.content.rstrip(), ""]
        if message.figures:
            lines += [f"*{message.figures.summary()}*", ""]
    return "\n".join(lines)

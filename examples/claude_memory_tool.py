"""Claude keeps its memory in Wenchang: the Anthropic SDK's tool runner with
``WenchangMemoryToolSync`` as the memory tool's backend.

    python examples/claude_memory_tool.py http://127.0.0.1:8000 wct_...

Without ``ANTHROPIC_API_KEY`` it only seeds a memory file and shows ``/memories``
(what Claude's first ``view`` would see); with it, Claude answers a question
from that memory and may edit it.
"""

import os
import sys

from anthropic import Anthropic
from anthropic.tools import ToolError
from wenchang_client.memory_tool import WenchangMemoryToolSync

MODEL = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5")
SEED = "/memories/preferences/coffee.md"


def seed(memory: WenchangMemoryToolSync) -> None:
    """What an earlier conversation left, written once."""
    try:
        memory.run({"command": "view", "path": SEED})
    except ToolError:
        text = "- [stated] Takes coffee black, no sugar.\n"
        print(memory.run({"command": "create", "path": SEED, "file_text": text}))


def main(base_url: str, token: str) -> None:
    memory = WenchangMemoryToolSync(base_url, token, "user")
    seed(memory)
    print(memory.run({"command": "view", "path": "/memories"}))
    if not os.environ.get("ANTHROPIC_API_KEY"):
        print("ANTHROPIC_API_KEY is not set: the conversation is skipped.")
        return
    runner = Anthropic().beta.messages.tool_runner(
        model=MODEL,
        max_tokens=1024,
        tools=[memory],
        messages=[{"role": "user", "content": "How do I take my coffee?"}],
    )
    for message in runner:
        for block in message.content:
            if block.type == "text":
                print(block.text)
    memory.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

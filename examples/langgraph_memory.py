"""A LangGraph agent keeping long-term memory in Wenchang: ``WenchangStore`` is
the graph's store, so what one thread learns another recalls.

    python examples/langgraph_memory.py http://127.0.0.1:8000 wct_...

The agent here is deterministic (it remembers sentences starting "remember" and
recalls by Wenchang search), so it runs without a model; a chat model node would
use ``store`` the same way.
"""

# langgraph.graph ships no type information (langgraph.store does): its builder's
# types are unknown to a strict checker, so only those checks are off here.
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false

import asyncio
import sys
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from wenchang_client.langgraph import WenchangStore


class State(TypedDict):
    user: str
    message: str
    answer: str


async def agent(state: State, *, store: BaseStore) -> dict[str, str]:
    namespace = ("memories", state["user"])
    text = state["message"]
    if text.lower().startswith("remember "):
        fact = text[len("remember ") :]
        key = fact.split()[0].lower()
        await store.aput(namespace, key, {"content": f"- [stated] {fact}\n"})
        return {"answer": f"Noted: {fact}"}
    topic = text.rstrip("?").split()[-1]  # "how do I take my tea?" -> "tea"
    found = await store.asearch(namespace, query=topic, limit=1)
    if not found:
        return {"answer": "I don't remember anything about that."}
    return {"answer": f"You told me: {found[0].value['content'].strip()}"}


async def main(base_url: str, token: str) -> None:
    store = WenchangStore(base_url, token, "user")
    graph = (
        StateGraph(State)
        .add_node("agent", agent)
        .add_edge(START, "agent")
        .add_edge("agent", END)
        .compile(store=store)
    )
    for message in ("remember tea: green, no milk", "how do I take my tea?"):
        state = await graph.ainvoke({"user": "alice", "message": message, "answer": ""})
        print(state["answer"])
    await store.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))

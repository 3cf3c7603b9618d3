import asyncio

from gligabao import AsyncGligabao


async def main() -> None:
    client = AsyncGligabao()
    queued = await client.remember(user_id="alice", text="Alice Novak visited Lima.", wait=False)
    async for event in client.run_events(queued.remember_run_id):
        print(event.event)
    found = await client.search(user_id="alice", query="Lima")
    print(found.facts[0].description)


asyncio.run(main())

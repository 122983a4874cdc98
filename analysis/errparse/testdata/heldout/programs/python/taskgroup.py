import asyncio


async def fetch(name):
    await asyncio.sleep(0)
    if name == "b":
        raise ValueError(f"cannot fetch {name}")
    return name


async def main():
    async with asyncio.TaskGroup() as tg:
        for n in ["a", "b"]:
            tg.create_task(fetch(n))


asyncio.run(main())

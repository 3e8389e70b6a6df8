"""The client side: the blocking `Client` and the asyncio `AsyncClient`, their sessions and
turns, over the one endpoint driver (`acp_sdk._driver`).
"""

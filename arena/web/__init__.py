"""The pages a server answers: the live page (:mod:`arena.web.live`, with the spectators' :mod:`arena.web.watch`),
a person's seat (:mod:`arena.web.seat`) and the ladder's site (:mod:`arena.web.ladder`), each a Starlette
application served by uvicorn; what they all do to keep a hostile page or client out is :mod:`arena.web.security`,
what a client may cost them :mod:`arena.web.guard`."""

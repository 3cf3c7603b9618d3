from gligabao import AmbiguousEntityError, Gligabao, GligabaoConnectionError, GligabaoError

client = Gligabao()

try:
    client.search(user_id="alice", query="Acme", limit=1000)
except GligabaoError as error:
    # the server refused the request: its status and its {"error": "..."} text, naming the field
    print(f"{error.status}: {error.error}")

try:
    story = client.entity(user_id="alice", name="Alice")
    print(story.entity.name, len(story.facts))
except AmbiguousEntityError as error:
    # a name that means several entities (the server's 300): ask again by id
    best = error.candidates.candidates[0]
    story = client.entity(user_id="alice", id=best.id)
    print(story.entity.name, len(story.facts))

try:
    Gligabao("http://127.0.0.1:9", token="x").datasets(user_id="alice")
except GligabaoConnectionError as error:
    # no answer at all: the server is down or unreachable
    print(f"not reachable: {error}")

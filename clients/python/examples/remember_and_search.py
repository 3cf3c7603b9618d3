from gligabao import Gligabao

# the server's URL and token; both default to $GLIGABAO_URL and $GLIGABAO_TOKEN
client = Gligabao()

# waits for the run: the model extracts entities and facts, and they are stored
remembered = client.remember(
    user_id="alice",
    text="Alice Novak works at Acme in 2020. Alice Novak lives in Lisbon.",
)
print(f"run {remembered.remember_run_id}: {len(remembered.edges)} facts")

found = client.search(user_id="alice", query="Where does Alice Novak work?")
for fact in found.facts:
    print(f"{fact.score:.2f}  {fact.description}  (since {fact.valid_at})")

from gligabao import Gligabao

client = Gligabao()

client.remember(user_id="alice", text="Alice Novak works at Acme in 2020.")

# the facts and entities most relevant to the question, as text for a prompt
block = client.context(user_id="alice", query="Alice Novak", max_tokens=400)
print(block.context)
print(f"({block.tokens} tokens, {len(block.facts)} facts)")

prompt = f"Use what you know about the user:\n\n{block.context}\n\nQuestion: where does Alice work?"

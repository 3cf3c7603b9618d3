from gligabao import Gligabao, RememberResponse

client = Gligabao()

queued = client.remember(user_id="alice", text="Alice Novak visited Porto.", wait=False)
for event in client.run_events(queued.remember_run_id):
    # queued, started, stage (a stage's start and end), progress ... then succeeded
    print(event.event, event.data.get("stage", ""))
    # the last event carries the run, with its response once it succeeded
    run = event.run
    if event.final and run is not None and isinstance(run.response, RememberResponse):
        print([fact.description for fact in run.response.edges])

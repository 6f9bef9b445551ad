import json

# Two checks of a suite, an event from a newer worker, a check missing its id, a result.
print(json.dumps({"event": "check", "check": {"id": "a", "name": "A", "status": "pass"}}))
print(json.dumps({"event": "from_the_future", "x": 1}))
print(json.dumps({"event": "check", "check": {"name": "no id"}}))
print(json.dumps({"event": "check", "check": {"id": "b", "name": "B", "status": "odd"}}))
print(json.dumps({"event": "result", "data": {"checks": 2}}))

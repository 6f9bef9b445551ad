import sys

print("this is not json")
print("{broken json")
print('["a", "list"]')
print('{"no_event_key": 1}')
sys.stdout.buffer.write(b"\xff\xfe invalid utf-8\n")
print('{"event": "progress", "fraction": "not a number"}')

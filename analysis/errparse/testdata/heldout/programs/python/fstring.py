def greet(user):
    name = user.get("name", "guest")
    return f"Hello, {name!r:>10"


print(greet({"name": "ana"}))

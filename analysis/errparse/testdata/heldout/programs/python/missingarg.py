class Greeter:
    def __init__(self, greeting, name):
        self.greeting = greeting
        self.name = name

    def text(self):
        return f"{self.greeting}, {self.name}"


def build():
    g = Greeter("hello")
    return g.text()


print(build())

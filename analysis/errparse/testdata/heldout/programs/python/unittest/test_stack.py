import unittest


class Stack:
    def __init__(self):
        self.items = []

    def push(self, x):
        self.items.insert(0, x)

    def peek(self):
        return self.items[-1]


class StackTest(unittest.TestCase):
    def test_peek(self):
        s = Stack()
        s.push(1)
        s.push(2)
        self.assertEqual(s.peek(), 2)


if __name__ == "__main__":
    unittest.main()

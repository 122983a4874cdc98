class Account:
    def __init__(self):
        self.balance = 0

    def withdraw(self, amount):
        self.balance -= amount


class TestAccount:
    def test_no_overdraft(self):
        a = Account()
        a.withdraw(10)
        assert a.balance >= 0

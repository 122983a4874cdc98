import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from billing.invoice import with_tax  # noqa: E402


class InvoiceTest(unittest.TestCase):
    def test_with_tax(self):
        lines = [(2, "9.50"), (1, 3.0)]
        self.assertAlmostEqual(with_tax(lines, 0.2), 26.4)


if __name__ == "__main__":
    unittest.main()

from inventory.stock import report


def test_report_handles_empty_orders():
    rows = [("A1", 5, 10), ("B2", 0, 0)]
    assert report(rows)["B2"] == 0

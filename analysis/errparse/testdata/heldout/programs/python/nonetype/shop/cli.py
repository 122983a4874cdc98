import sys

from shop.catalog import find


def main(args):
    for name in args:
        item = find(name)
        print(item["name"], item.get("price"))


if __name__ == "__main__":
    main(sys.argv[1:] or ["tea", "cocoa"])

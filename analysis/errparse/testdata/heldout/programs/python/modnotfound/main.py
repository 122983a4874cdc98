from app import db


def main():
    print(db.connect("localhost"))


main()

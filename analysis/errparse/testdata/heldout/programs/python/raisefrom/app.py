import settings


def main():
    print("connecting to", settings.database_url())


if __name__ == "__main__":
    main()

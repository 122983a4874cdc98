PRODUCTS = {"tea": 3.5, "coffee": 4.0}


def find(name):
    if name in PRODUCTS:
        return {"name": name, "price": PRODUCTS[name]}

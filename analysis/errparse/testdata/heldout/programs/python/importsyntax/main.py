import helpers

print(helpers.double(4))

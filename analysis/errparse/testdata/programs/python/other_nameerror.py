import sys

print("args:", len(sys.argv))
print(undefined_setting)

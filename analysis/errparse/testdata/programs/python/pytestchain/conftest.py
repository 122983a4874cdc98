# Puts this directory on sys.path so that the tests import app.

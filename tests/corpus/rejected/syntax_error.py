# A file that does not parse: one module diagnostic TL001 with its position, no functions.
def broken(x:
    return x

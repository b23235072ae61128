# cmake -DINPUT=FILE -DOUTPUT=FILE.c -DNAME=SYMBOL -P embed.cmake
# Writes FILE as a C byte array, SYMBOL[] and SYMBOL_len (no NUL added): a file meshlab needs at
# run time, built into the binary so that an installed meshlab needs no source tree.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR bytes "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REPEAT "0x[0-9a-f][0-9a-f]," 16 row)
string(REGEX REPLACE "(${row})" "\\1\n    " body "${body}")
file(WRITE "${OUTPUT}"
    "/* Generated from ${INPUT} by cmake/embed.cmake: do not edit. */\n"
    "#include <stddef.h>\n\n"
    "const unsigned char ${NAME}[] = {\n    ${body}\n};\n"
    "const size_t ${NAME}_len = ${bytes};\n")

/*
 * data.c - a library without code (linked without the C run-time's start
 * files): no executable segment, so the runtime has nothing to protect in
 * it, but it is a link map like any other.
 */
const char xom_test_data[100] = "data";

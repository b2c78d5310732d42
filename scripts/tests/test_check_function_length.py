"""scripts.ci.check_function_length: what counts as a function and how long it is."""
from scripts.ci.check_function_length import long_functions


def body(n: int) -> str:
    return "".join(f"  x += {i};\n" for i in range(n))


def test_a_long_function_is_flagged_with_its_line_and_length():
    src = "int f(int x) {\n" + body(80) + "  return x;\n}\n"
    assert long_functions(src) == [(1, "f", 83)]
    assert long_functions("int f(int x) {\n" + body(77) + "  return x;\n}\n") == []


def test_blocks_lambdas_and_loops_count_towards_their_function_only():
    src = "void g() {\n  for (int i = 0; i < 3; ++i) {\n" + body(40) + "  }\n  auto h = [&](int y) {\n" \
          + body(40) + "  };\n}\n"
    assert [(n, length) for _, n, length in long_functions(src)] == [("g", 86)]


def test_namespaces_classes_and_initialisers_are_not_functions():
    src = "namespace a {\nstruct S {\n  int v[3] = {1, 2, 3};\n  void m() const {\n" + body(81) + "  }\n};\n" \
          + "const int table[] = {\n" + "".join(f"  {i},\n" for i in range(100)) + "};\n}  // namespace a\n"
    assert [(n, length) for _, n, length in long_functions(src)] == [("m", 83)]


def test_comments_strings_and_constructor_initialisers():
    src = "// void fake() {\nconst char* s = \"{ not a block\";\nS::S(int a) : a_(a), b_{a} {\n" + body(85) \
          + "}\nTEST(Suite, Name) {\n" + body(10) + "}\n"
    assert [(n, length) for _, n, length in long_functions(src)] == [("S::S", 87)]
    assert long_functions(src, limit=5)[-1][1:] == ("TEST", 12)

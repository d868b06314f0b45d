// The C API from C++: the header is `extern "C"`. Build against an installed prefix:
//   c++ -o example_cpp examples/cpp/main.cpp $(pkg-config --cflags --libs usertrace) -Wl,-rpath,PREFIX/lib
// (the .pc sets no run path: give one, or LD_LIBRARY_PATH, for a prefix ld.so does not search)
#include <usertrace.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

USERTRACE_EVENT(greeting, USERTRACE_FIELD_STR(who), USERTRACE_FIELD_I64(n), USERTRACE_FIELD_BOOL(loud));
USERTRACE_PROVIDER(example_cpp, &greeting);  // event example_cpp_greeting

int main(int argc, char **argv) {
  bool wait = argc > 1 && std::strcmp(argv[1], "--wait") == 0;
  usertrace_result r = usertrace_provider_register(&example_cpp);
  if (r != USERTRACE_OK) {
    char why[512];
    usertrace_last_error(why, sizeof why, nullptr);
    std::fprintf(stderr, "example_cpp: tracing off: %s\n", why);
  }
  for (int i = 0; wait && r == USERTRACE_OK && !USERTRACE_ENABLED(greeting) && i < 3000; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string who = "world";
  for (int64_t n = -1; n <= 1; n++) {
    USERTRACE_EMIT(greeting, usertrace_str(who.c_str()), usertrace_i64(n), usertrace_bool(n > 0));
  }
  std::printf("example_cpp: done (tracing %s)\n", r == USERTRACE_OK ? "on" : "off");
  return 0;
}

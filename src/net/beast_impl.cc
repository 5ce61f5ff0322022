// The one translation unit that compiles Boost.Asio, Asio SSL and Beast (see net/CMakeLists.txt).
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>

#include "launcher/status/status_server.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

namespace cpplaunch {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// The server on its own loop thread; the test is its client, with blocking sockets.
class Served {
 public:
  Served() {
    server_ = std::make_unique<StatusServer>(
        io_, "127.0.0.1", 0, [this](const StatusServer::Request& request) {
          targets_.emplace_back(request.target);
          proofs_.emplace_back(request.proof);
          return StatusServer::Response{200, "text/plain", "hello\n"};
        });
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Served() {
    asio::post(io_, [this] { server_->Stop(); });
    thread_.join();
  }
  Served(const Served&) = delete;
  Served& operator=(const Served&) = delete;

  tcp::socket Connect() {
    tcp::socket socket(client_io_);
    socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                 static_cast<unsigned short>(server_->port())));
    return socket;
  }
  // Sends `request` and reads until the server closes.
  std::string Exchange(const std::string& request) {
    tcp::socket socket = Connect();
    asio::write(socket, asio::buffer(request));
    return ReadToEnd(socket);
  }
  static std::string ReadToEnd(tcp::socket& socket) {
    std::string answer;
    boost::system::error_code error;
    asio::read(socket, asio::dynamic_buffer(answer), error);
    return answer;
  }
  const std::vector<std::string>& targets() const { return targets_; }
  const std::vector<std::string>& proofs() const { return proofs_; }

 private:
  asio::io_context io_;
  asio::io_context client_io_;
  std::unique_ptr<StatusServer> server_;
  std::thread thread_;
  std::vector<std::string> targets_;  // written on the loop thread, read after an exchange
  std::vector<std::string> proofs_;
};

}  // namespace

TEST_CASE("The status server answers one GET per connection, then closes") {
  Served served;
  const std::string answer =
      served.Exchange("GET /status?x=1 HTTP/1.1\r\nHost: a\r\nX-Cpplaunch-Proof: 12:ab\r\n\r\n");
  CHECK(answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(answer.find("Connection: close\r\n") != std::string::npos);
  CHECK(answer.find("Content-Length: 6\r\n") != std::string::npos);
  CHECK(answer.substr(answer.size() - 6) == "hello\n");
  REQUIRE(served.targets().size() == 1);
  CHECK(served.targets()[0] == "/status?x=1");
  CHECK(served.proofs()[0] == "12:ab");
}

TEST_CASE("The status server answers HEAD without a body and refuses other methods") {
  Served served;
  const std::string head = served.Exchange("HEAD /healthz HTTP/1.1\r\nHost: a\r\n\r\n");
  CHECK(head.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(head.find("hello") == std::string::npos);
  const std::string post =
      served.Exchange("POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n");
  CHECK(post.rfind("HTTP/1.1 405 ", 0) == 0);
  CHECK(served.targets().size() == 1);  // the handler never saw the POST
}

TEST_CASE("The status server closes a request whose head is too large, unanswered") {
  Served served;
  const std::string huge(StatusServer::kMaxRequestBytes + 1, 'a');
  const std::string answer =
      served.Exchange("GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + huge + "\r\n\r\n");
  CHECK(answer.find("200") == std::string::npos);
  CHECK(served.targets().empty());
}

TEST_CASE("The status server holds at most kMaxConnections; the next is closed at accept") {
  Served served;
  std::vector<tcp::socket> idle;
  for (std::size_t i = 0; i < StatusServer::kMaxConnections; ++i) {
    idle.push_back(served.Connect());
    asio::write(idle.back(), asio::buffer(std::string("GET / HT")));  // a slow client
  }
  // One more: closed at once, without an answer.
  tcp::socket extra = served.Connect();
  CHECK(Served::ReadToEnd(extra).empty());
  // A freed place serves again.
  idle.front().close();
  std::string answer;
  for (int i = 0; i < 100 && answer.empty(); ++i) {
    answer = served.Exchange("GET /again HTTP/1.1\r\nHost: a\r\n\r\n");
  }
  CHECK(answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
}

TEST_CASE("The status server says which address it cannot listen on, in one line") {
  asio::io_context io;
  const auto handler = [](const StatusServer::Request&) { return StatusServer::Response{}; };
  StatusServer first(io, "127.0.0.1", 0, handler);
  try {
    StatusServer second(io, "127.0.0.1", first.port(), handler);
    FAIL("a second server bound the same port");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find("cannot serve the status endpoint on 127.0.0.1:" +
                    std::to_string(first.port()) + ": Address already in use") == 0);
    CHECK(what.find('\n') == std::string::npos);
  }
  CHECK_THROWS_WITH(StatusServer(io, "not-an-address", 0, handler),
                    Catch::Contains("--status-addr not-an-address: not a numeric address"));
}

}  // namespace cpplaunch

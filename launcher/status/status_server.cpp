#include "launcher/status/status_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <list>
#include <stdexcept>
#include <utility>

#include "base/crypto/status_proof.h"
#include "rendezvous/store/endpoint.h"

namespace cpplaunch {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

}  // namespace

// Shared with the connections' handlers, so that a handler that runs after Stop() (cancelled)
// finds the server's state still there.
class StatusServer::Impl : public std::enable_shared_from_this<StatusServer::Impl> {
 public:
  Impl(asio::io_context& io, Handler handler) : acceptor_(io), handler_(std::move(handler)) {}

  void Listen(const std::string& address, int port) {
    boost::system::error_code error;
    const auto ip = asio::ip::make_address(address, error);
    const std::string where = Endpoint{address, port}.ToString();
    if (error) {
      throw std::runtime_error("--status-addr " + address +
                               ": not a numeric address; give one such as 127.0.0.1 or 0.0.0.0");
    }
    const tcp::endpoint endpoint(ip, static_cast<unsigned short>(port));
    acceptor_.open(endpoint.protocol(), error);
    if (!error) acceptor_.set_option(asio::socket_base::reuse_address(true), error);
    if (!error) acceptor_.bind(endpoint, error);
    if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
    if (error) {
      throw std::runtime_error("cannot serve the status endpoint on " + where + ": " +
                               error.message() + "; choose another --status-port (0: a free one)");
    }
  }

  void Accept() {
    acceptor_.async_accept(
        [self = shared_from_this()](boost::system::error_code error, tcp::socket socket) {
          if (!self->acceptor_.is_open()) return;
          if (!error) self->Start(std::move(socket));
          self->Accept();
        });
  }

  int port() const { return acceptor_.is_open() ? acceptor_.local_endpoint().port() : 0; }
  std::size_t connections() const { return connections_.size(); }

  void Stop() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    for (auto& connection : connections_) connection->stream.close();
  }

 private:
  struct Connection {
    explicit Connection(tcp::socket socket) : stream(std::move(socket)) {}
    beast::tcp_stream stream;
    beast::flat_buffer buffer{kMaxRequestBytes};
    http::request_parser<http::empty_body> parser;
    http::response<http::string_body> response;
  };
  using Connections = std::list<std::shared_ptr<Connection>>;

  void Start(tcp::socket socket) {
    if (connections_.size() >= kMaxConnections) return;  // the socket closes here
    auto connection = std::make_shared<Connection>(std::move(socket));
    connection->parser.header_limit(static_cast<std::uint32_t>(kMaxRequestBytes));
    connection->parser.body_limit(0);
    connection->stream.expires_after(kRequestDeadline);
    connections_.push_front(connection);
    http::async_read(connection->stream, connection->buffer, connection->parser,
                     [self = shared_from_this(), it = connections_.begin()](
                         boost::system::error_code error, std::size_t /*bytes*/) {
                       self->OnRequest(it, error);
                     });
  }

  void OnRequest(Connections::iterator it, boost::system::error_code error) {
    Connection& connection = **it;
    if (error || !acceptor_.is_open()) return Close(it);
    const auto& request = connection.parser.get();
    Response answer;
    const bool head = request.method() == http::verb::head;
    if (request.method() != http::verb::get && !head) {
      answer = Response{405, "text/plain; charset=utf-8", "only GET and HEAD are served\n"};
    } else {
      const auto proof =
          request.find(beast::string_view(kStatusProofHeader.data(), kStatusProofHeader.size()));
      answer = handler_(Request{
          std::string_view(request.target().data(), request.target().size()),
          proof == request.end() ? std::string_view()
                                 : std::string_view(proof->value().data(), proof->value().size())});
    }
    auto& response = connection.response;
    response.version(11);
    response.result(answer.status);
    response.set(http::field::content_type, answer.content_type);
    response.set(http::field::cache_control, "no-store");
    response.keep_alive(false);
    response.body() = head ? std::string() : std::move(answer.body);
    response.prepare_payload();
    if (head) response.content_length(answer.body.size());
    http::async_write(connection.stream, response,
                      [self = shared_from_this(), it](boost::system::error_code /*error*/,
                                                      std::size_t /*bytes*/) { self->Close(it); });
  }

  void Close(Connections::iterator it) {
    beast::error_code ignored;
    (*it)->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    (*it)->stream.close();
    connections_.erase(it);
  }

  tcp::acceptor acceptor_;
  Handler handler_;
  Connections connections_;
};

StatusServer::StatusServer(asio::io_context& io, const std::string& address, int port,
                           Handler handler)
    : impl_(std::make_shared<Impl>(io, std::move(handler))) {
  impl_->Listen(address, port);
  impl_->Accept();
}

StatusServer::~StatusServer() { Stop(); }

int StatusServer::port() const { return impl_->port(); }
std::size_t StatusServer::connection_count() const { return impl_->connections(); }
void StatusServer::Stop() { impl_->Stop(); }

}  // namespace cpplaunch

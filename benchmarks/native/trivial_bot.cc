// A trivial gRPC bot in C++, for the benchmarks: the first legal call or card, at once.
//
// It is what a native entry costs the arena with no thought of its own: it dials the address given by
// --arena (host:port or unix:/path), says hello with the token in $CALLBREAK_TOKEN, and answers every
// request on the one stream with its first legal call or card. benchmarks/trivial_bots.py builds it with
// protoc, grpc_cpp_plugin and the C++ compiler (Debian: libgrpc++-dev, protobuf-compiler-grpc).
//
//     trivial_bot --arena ADDRESS
//
// Exit status: 0 when the arena ends the stream, 1 when it refuses the bot, 2 for a bad command line.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "callbreak.grpc.pb.h"

using callbreak::v1::Arena;
using callbreak::v1::ConnectRequest;
using callbreak::v1::ConnectResponse;

int main(int argc, char** argv) {
  std::string address;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--arena") == 0) address = argv[i + 1];
  }
  if (address.empty()) {
    std::cerr << "usage: trivial_bot --arena ADDRESS (the token in $CALLBREAK_TOKEN)\n";
    return 2;
  }
  const char* token = std::getenv("CALLBREAK_TOKEN");
  auto stub = Arena::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  auto stream = stub->Connect(&context);
  ConnectRequest hello;
  hello.mutable_hello()->set_token(token != nullptr ? token : "");
  hello.mutable_hello()->set_protocol_version(1);
  stream->Write(hello);
  ConnectResponse message;
  ConnectRequest answer;
  while (stream->Read(&message)) {
    if (message.has_call_request()) {
      answer.mutable_call()->set_request_id(message.call_request().request_id());
      answer.mutable_call()->set_call(message.call_request().legal_calls(0));
      stream->Write(answer);
    } else if (message.has_play_request()) {
      answer.mutable_play()->set_request_id(message.play_request().request_id());
      answer.mutable_play()->set_card(message.play_request().legal_cards(0));
      stream->Write(answer);
    } else if (message.has_refusal()) {
      std::cerr << "refused: " << message.refusal().detail() << "\n";
      return 1;
    }
  }
  stream->WritesDone();
  stream->Finish();
  return 0;
}

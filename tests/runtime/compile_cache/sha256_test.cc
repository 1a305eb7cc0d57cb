#include "runtime/compile_cache/sha256.h"

#include <string>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

// FIPS 180-4 examples and the million-'a' message.
TEST(Sha256Test, KnownDigests) {
  EXPECT_EQ(DigestHex(Sha256Of("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(DigestHex(Sha256Of("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(DigestHex(Sha256Of(
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(DigestHex(Sha256Of(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Fed in pieces of every size, including ones straddling the 64-byte blocks
// and the 56-byte padding boundary, the digest is the one-shot digest.
TEST(Sha256Test, IncrementalUpdatesMatchOneShot) {
  std::string message;
  for (int i = 0; i < 300; ++i) message.push_back(static_cast<char>(i * 7));
  for (size_t length : {0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 300}) {
    const std::string m = message.substr(0, length);
    for (size_t piece : {1, 3, 63, 64, 65}) {
      Sha256 h;
      for (size_t at = 0; at < m.size(); at += piece) {
        h.Update(m.substr(at, piece));
      }
      EXPECT_EQ(DigestHex(h.Finish()), DigestHex(Sha256Of(m)))
          << "length " << length << " piece " << piece;
    }
  }
}

// RFC 4231 test cases 1, 2 and 6 (a key longer than a block).
TEST(Sha256Test, HmacRfc4231) {
  EXPECT_EQ(DigestHex(HmacSha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(DigestHex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(DigestHex(HmacSha256(
                std::string(131, '\xaa'),
                "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(Sha256Test, DigestsEqualComparesEveryByte) {
  Sha256Digest a = Sha256Of("x");
  Sha256Digest b = a;
  EXPECT_TRUE(DigestsEqual(a.data(), b.data()));
  for (int i : {0, 17, 31}) {
    b = a;
    b[i] ^= 1;
    EXPECT_FALSE(DigestsEqual(a.data(), b.data())) << i;
  }
}

}  // namespace
}  // namespace guardjit
